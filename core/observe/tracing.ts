/**
 * OpenTelemetry traces of the HTTP traffic (docs/operations.md#tracing). Off unless an OTLP endpoint
 * is configured: then `createTracing` returns undefined, no provider or exporter exists and requests
 * carry no `RequestTrace`. On, each HTTP request is a SERVER span, parented on the caller's W3C
 * traceparent when one came (its sampled flag followed only for a key that may decide: trace-trust.ts;
 * anyone else is sampled at `sampleRatio`), with child spans for the stages the pipeline and the Gate report
 * (request-trace.ts) and a CLIENT span per service call, whose context is what the service receives.
 * A gRPC client call (`process`, `processResponseStream`, `processStream`) is a SERVER span the same
 * way, parented on the caller's `traceparent` metadata (`calls`, given to ClientCalls); its key comes
 * in the message, after the span starts, so a gRPC caller's sampled flag is never followed.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, Middleware } from 'koa';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  createContextKey,
  isSpanContextValid,
  trace,
  type Context as OtelContext,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import { GATE_SERVICE_NAME } from '../../proto/src/index.js';
import type { GatewayConfig } from '../config/types.js';
import type { CallTrace, CallTracer, RequestTrace, ServiceCallSpan, StageObserver, TraceStage } from './request-trace.js';
import { parseTraceparent } from './trace-context.js';
import type { TraceTrust } from './trace-trust.js';

/** GenAI semantic-convention attribute names (still "incubating" upstream, so spelled out here). */
const GEN_AI_SYSTEM = 'gen_ai.system';
const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
const GEN_AI_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
const GEN_AI_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
/** RPC semantic-convention attribute names (incubating upstream too). */
const RPC_SYSTEM = 'rpc.system';
const RPC_SERVICE = 'rpc.service';
const RPC_METHOD = 'rpc.method';
/** The in-band error code of a gRPC client call (its gRPC status is OK: errors travel in the answer). */
const GATEWAY_ERROR_CODE = 'gateway.error_code';

export interface Tracing {
  /** Koa middleware that opens the request's span; mount it right after the HTTP app's own. */
  readonly middleware: Middleware;
  /** Given to `Pipeline.observeStages`: finds the request being served and enters its stage. */
  readonly stages: StageObserver;
  /** Given to `ClientCalls.traceCalls`: the spans of gRPC client calls. */
  readonly calls: CallTracer;
  /** Exports what is buffered and stops the exporter. */
  close(): Promise<void>;
}

/** Set on a caller's context when its key may decide its own sampling (trace-trust.ts). */
const CALLER_DECIDES = createContextKey('model-gateway.caller-decides-sampling');

/**
 * The gateway's own spans follow their parent; a new trace is sampled at the ratio; a caller's
 * sampled flag decides only when its key may (CALLER_DECIDES). Anyone else's request is sampled at
 * the ratio on a draw of its own: the caller chose the trace ID, so it cannot be the draw.
 */
class CallerAwareSampler implements Sampler {
  readonly #ratio: number;
  readonly #root: TraceIdRatioBasedSampler;

  constructor(ratio: number) {
    this.#ratio = ratio;
    this.#root = new TraceIdRatioBasedSampler(ratio);
  }

  shouldSample(context: OtelContext, traceId: string): SamplingResult {
    const parent = trace.getSpanContext(context);
    if (!parent || !isSpanContextValid(parent)) return this.#root.shouldSample(context, traceId);
    if (!parent.isRemote || context.getValue(CALLER_DECIDES) === true)
      return decision((parent.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED);
    return decision(Math.random() < this.#ratio);
  }

  toString(): string {
    return `CallerAwareSampler{${this.#ratio}}`;
  }
}

const decision = (sampled: boolean): SamplingResult => ({
  decision: sampled ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
});

/** `trust` says whether an HTTP request's key lets its traceparent decide its sampling; by default none does. */
export function createTracing(config: GatewayConfig['tracing'], trust: TraceTrust = () => false): Tracing | undefined {
  if (!config.otlpEndpoint) return undefined;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    sampler: new CallerAwareSampler(config.sampleRatio),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.otlpEndpoint }))],
  });
  // The provider is not registered globally: parents are passed explicitly, so tracing here cannot
  // interfere with (or be changed by) an application embedding the gateway.
  const tracer = provider.getTracer('model-gateway');
  // The pipeline is shared by every request: it learns which one it is serving from here.
  const current = new AsyncLocalStorage<HttpRequestTrace>();

  const middleware: Middleware = async function traceRequest(ctx, next) {
    const traceparent = ctx.get('traceparent');
    // The key is looked up only for a request that asks to be sampled: the rest pay nothing.
    const asksSampled = ((parseTraceparent(traceparent)?.flags ?? 0) & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
    const decides = asksSampled && trust((name) => ctx.get(name));
    const requestTrace = new HttpRequestTrace(
      tracer,
      ctx.method,
      { [ATTR_HTTP_REQUEST_METHOD]: ctx.method, [ATTR_URL_PATH]: ctx.path },
      traceparent,
      decides,
    );
    ctx.state.record.trace = requestTrace;
    let status: number | undefined;
    try {
      await current.run(requestTrace, next);
    } catch (err) {
      // The HTTP app's error middleware, outside this one, renders it with this status.
      status = (err as { status?: number }).status ?? 500;
      throw err;
    } finally {
      requestTrace.finish(ctx, status ?? ctx.status);
    }
  };
  return {
    middleware,
    stages: { enter: (stage) => current.getStore()?.enter(stage) },
    calls: { start: (method, traceparent) => new GrpcCallTrace(tracer, method, traceparent, false) },
    close: () => provider.shutdown(),
  };
}

/** The caller's span as the parent, when the request carries a valid traceparent; `decides`: its sampled flag is followed. */
function callerContext(header: string, decides: boolean): OtelContext {
  const parsed = parseTraceparent(header);
  if (!parsed) return ROOT_CONTEXT;
  const context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parsed.traceId,
    spanId: parsed.parentId,
    traceFlags: parsed.flags & TraceFlags.SAMPLED,
    isRemote: true,
  });
  return decides ? context.setValue(CALLER_DECIDES, true) : context;
}

/** A request's SERVER span, its stage spans and its service calls; HTTP and gRPC differ in how they end. */
class SpanTrace implements RequestTrace {
  readonly #tracer: Tracer;
  protected readonly span: Span;
  readonly #context: OtelContext;
  #stage: { name: TraceStage; span: Span } | undefined = undefined;
  protected model: string | undefined = undefined;

  constructor(tracer: Tracer, name: string, attributes: Record<string, string>, traceparent: string | undefined, callerDecides: boolean) {
    this.#tracer = tracer;
    this.span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, callerContext(traceparent ?? '', callerDecides));
    this.#context = trace.setSpan(ROOT_CONTEXT, this.span);
  }

  enter(stage: TraceStage): void {
    if (this.#stage?.name === stage) return;
    this.endStage();
    this.#stage = { name: stage, span: this.#tracer.startSpan(`gateway.${stage}`, {}, this.#context) };
  }

  serviceCall(service: string, model: string | undefined): ServiceCallSpan {
    // Dispatch (routing, choosing an instance) ends when the request goes to the service.
    this.endStage();
    this.model ??= model;
    const span = this.#tracer.startSpan(
      'gateway.service_call',
      {
        kind: SpanKind.CLIENT,
        attributes: { [GEN_AI_SYSTEM]: service, ...(model !== undefined && { [GEN_AI_REQUEST_MODEL]: model }) },
      },
      this.#context,
    );
    const { traceId, spanId, traceFlags } = span.spanContext();
    return {
      traceparent: `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00'}`,
      firstByte: () => span.addEvent('first_byte'),
      end: (outcome, chunks) => {
        span.addEvent('stream_end', { chunks });
        if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        span.end();
      },
    };
  }

  protected endStage(): void {
    this.#stage?.span.end();
    this.#stage = undefined;
  }

  /** Attributes every request span ends with. */
  protected endWith(service: string | undefined, inputTokens: number | undefined, outputTokens: number | undefined, failed: boolean): void {
    const span = this.span;
    if (service) span.setAttribute(GEN_AI_SYSTEM, service);
    if (this.model !== undefined) span.setAttribute(GEN_AI_REQUEST_MODEL, this.model);
    if (inputTokens !== undefined) span.setAttribute(GEN_AI_INPUT_TOKENS, inputTokens);
    if (outputTokens !== undefined) span.setAttribute(GEN_AI_OUTPUT_TOKENS, outputTokens);
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
}

class HttpRequestTrace extends SpanTrace {
  finish(ctx: Context, status: number): void {
    this.endStage();
    const record = ctx.state.record;
    const route = (ctx as { _matchedRoute?: string })._matchedRoute;
    const span = this.span;
    if (route !== undefined) {
      span.updateName(`${ctx.method} ${route}`);
      span.setAttribute(ATTR_HTTP_ROUTE, route);
    }
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    const service = record.service && `${record.service.account.name}/${record.service.name}`;
    this.endWith(service, record.inputTokens, record.outputTokens, status >= 500);
  }
}

/** A gRPC client call, named as the RPC conventions say: `<package.Service>/<method>`. */
class GrpcCallTrace extends SpanTrace implements CallTrace {
  constructor(tracer: Tracer, method: string, traceparent: string | undefined, callerDecides: boolean) {
    super(
      tracer,
      `${GATE_SERVICE_NAME}/${method}`,
      { [RPC_SYSTEM]: 'grpc', [RPC_SERVICE]: GATE_SERVICE_NAME, [RPC_METHOD]: method },
      traceparent,
      callerDecides,
    );
  }

  finish(code: string, status: number, attributes: { service?: string; inputTokens?: number; outputTokens?: number }): void {
    this.endStage();
    this.span.setAttribute(GATEWAY_ERROR_CODE, code);
    this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    this.endWith(attributes.service, attributes.inputTokens, attributes.outputTokens, status >= 500);
  }
}
