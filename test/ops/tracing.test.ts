import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/config/load.js';
import { createTracing } from '../../core/observe/tracing.js';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { demoGatewayLoads } from '../support/demo-modules.js';
import { eventually, startTestGateway, TEST_KEY, type TestGateway } from '../support/gateway.js';
import { json, processUnary, rawClient } from '../support/raw-gate-client.js';
import { startRawModel, type RawModel } from '../support/raw-model.js';
import { serveModel, silentLogger, type ModelService, type TraceContext } from '../../sdk/index.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
/** The second request, to a service on the SDK. */
const SDK_CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
/** A gRPC client call (`Gate.process`) with traceparent metadata. */
const GRPC_CALLER_TRACE = '5e2f8c1a9b3d4e6f7a8b9c0d1e2f3a4b';
const GRPC_SPAN = 'com.platform.gate.Gate/process';

const chatAnswer = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
};

describe('OpenTelemetry traces (OTLP/HTTP protobuf to a loopback receiver)', () => {
  let receiver: OtlpReceiver;
  let gw: TestGateway;
  let plain: RawModel;
  let sdkService: ModelService;
  const sdkSaw: (TraceContext | undefined)[] = [];
  let spans: ReceivedSpan[];

  const chat = (model: string, traceId: string) =>
    fetch(`${gw.httpUrl}/api/adapters/chatapi/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    gw = await startTestGateway({ ...chatConfigInput(), tracing: { otlpEndpoint: receiver.url, serviceName: 'gw-under-test' } });
    plain = await startRawModel(gw.grpcAddress, CHAT_TOKENS.plain, () => chatAnswer);
    sdkService = serveModel(
      {
        predict(_req, ctx) {
          sdkSaw.push(ctx.traceContext);
          return chatAnswer;
        },
      },
      { descriptor: { name: 'traced-echo' }, gateways: gw.grpcAddress, connectionToken: CHAT_TOKENS.echo, logger: silentLogger },
    );
    await sdkService.ready();
    for (const [model, traceId] of [
      ['demo/plain', CALLER_TRACE],
      ['demo/echo', SDK_CALLER_TRACE],
    ] as const) {
      const res = await chat(model, traceId);
      expect(res.status, await res.text()).toBe(200);
    }
    plain.close();
    await sdkService.stop();
    // Closing the gateway flushes the batch processor to the receiver.
    await gw.close();
    await eventually(() => receiver.spans.filter((s) => s.name.startsWith('POST ')).length === 2, 5000, 'both request spans to arrive');
    spans = receiver.spans;
  });
  afterAll(async () => receiver?.close());

  const named = (name: string, traceId = CALLER_TRACE) => {
    const found = spans.filter((s) => s.name === name && s.traceId === traceId);
    expect(found, `spans named ${name}: ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
    return found[0]!;
  };

  it('exports protobuf with the configured service name', () => {
    expect(receiver.contentTypes.every((t) => t === 'application/x-protobuf')).toBe(true);
    expect(new Set(spans.map((s) => s.serviceName))).toEqual(new Set(['gw-under-test']));
  });

  it("makes the request span a child of the caller's span, named by method and route template", () => {
    const request = named('POST /api/adapters/chatapi{/v1}/chat/completions');
    expect(request.traceId).toBe(CALLER_TRACE);
    expect(request.parentSpanId).toBe(CALLER_SPAN);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'http.route': '/api/adapters/chatapi{/v1}/chat/completions',
      'gen_ai.system': 'demo/plain',
      'gen_ai.usage.input_tokens': 3,
      'gen_ai.usage.output_tokens': 5,
    });
  });

  it('has admission, validation, dispatch and service-call children of the request span', () => {
    const request = named('POST /api/adapters/chatapi{/v1}/chat/completions');
    for (const name of ['gateway.admission', 'gateway.validation', 'gateway.dispatch', 'gateway.service_call']) {
      const child = named(name);
      expect(child.traceId, name).toBe(CALLER_TRACE);
      expect(child.parentSpanId, name).toBe(request.spanId);
    }
    const call = named('gateway.service_call');
    expect(call.attributes['gen_ai.system']).toBe('demo/plain');
    expect(call.events).toEqual(['first_byte', 'stream_end']);
  });

  it("sends the service a traceparent whose parent is the gateway's service-call span", () => {
    const call = named('gateway.service_call');
    expect(plain.requests.at(-1)!.headers.traceparent).toBe(`00-${CALLER_TRACE}-${call.spanId}-01`);
  });

  it("gives an SDK handler the trace context, parented on the gateway's service-call span", () => {
    const call = named('gateway.service_call', SDK_CALLER_TRACE);
    expect(call.attributes['gen_ai.request.model']).toBe('echo-1');
    expect(sdkSaw).toEqual([
      { traceparent: `00-${SDK_CALLER_TRACE}-${call.spanId}-01`, traceId: SDK_CALLER_TRACE, parentId: call.spanId, sampled: true },
    ]);
  });
});

describe('tracing of gRPC client calls', () => {
  let receiver: OtlpReceiver;
  let gw: TestGateway;
  let plain: RawModel;
  let spans: ReceivedSpan[];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    gw = await startTestGateway({ ...chatConfigInput(), tracing: { otlpEndpoint: receiver.url } });
    plain = await startRawModel(gw.grpcAddress, CHAT_TOKENS.plain, () => chatAnswer);
    const client = rawClient(gw.grpcAddress);
    const metadata = new grpc.Metadata();
    metadata.set('traceparent', `00-${GRPC_CALLER_TRACE}-${CALLER_SPAN}-01`);
    const answer = await processUnary(
      client,
      { account: 'demo', model: 'plain', authToken: TEST_KEY, predict: { data: json({ messages: [] }) } },
      metadata,
    );
    expect(answer.error).toBeUndefined();
    const refused = await processUnary(client, { account: 'demo', model: 'plain', authToken: 'not-a-key', predict: { data: json({}) } });
    expect(refused.error?.code).toBe('API_KEY_INVALID');
    client.close();
    plain.close();
    await gw.close();
    await eventually(() => receiver.spans.filter((s) => s.name === GRPC_SPAN).length === 2, 5000, 'both call spans to arrive');
    spans = receiver.spans;
  });
  afterAll(async () => receiver?.close());

  it("makes a call a SERVER span named by the RPC, child of the caller's traceparent metadata, with the stages and the service call under it", () => {
    const call = spans.find((s) => s.name === GRPC_SPAN && s.traceId === GRPC_CALLER_TRACE)!;
    expect(call.parentSpanId).toBe(CALLER_SPAN);
    expect(call.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'com.platform.gate.Gate',
      'rpc.method': 'process',
      'gateway.error_code': 'OK',
      'http.response.status_code': 200,
      'gen_ai.system': 'demo/plain',
    });
    for (const name of ['gateway.admission', 'gateway.validation', 'gateway.dispatch', 'gateway.service_call']) {
      const child = spans.filter((s) => s.name === name && s.traceId === GRPC_CALLER_TRACE);
      expect(child, name).toHaveLength(1);
      expect(child[0]!.parentSpanId, name).toBe(call.spanId);
    }
    const serviceCall = spans.find((s) => s.name === 'gateway.service_call' && s.traceId === GRPC_CALLER_TRACE)!;
    expect(plain.requests.at(-1)!.headers.traceparent).toBe(`00-${GRPC_CALLER_TRACE}-${serviceCall.spanId}-01`);
  });

  it('records a refused call with its error code, as a new trace without a caller context', () => {
    const refused = spans.find((s) => s.name === GRPC_SPAN && s.traceId !== GRPC_CALLER_TRACE)!;
    expect(refused.parentSpanId).toBeFalsy();
    expect(refused.attributes).toMatchObject({ 'gateway.error_code': 'API_KEY_INVALID', 'http.response.status_code': 401 });
    expect(
      spans
        .filter((s) => s.traceId === refused.traceId)
        .map((s) => s.name)
        .sort(),
    ).toEqual([GRPC_SPAN, 'gateway.admission'].sort());
  });
});

describe('tracing off', () => {
  it('creates no tracer or exporter without an endpoint', () => {
    const config = buildConfig(chatConfigInput(), { env: {} });
    expect(config.tracing.otlpEndpoint).toBeUndefined();
    expect(createTracing(config.tracing)).toBeUndefined();
  });

  it('a gateway without an endpoint loads no OpenTelemetry SDK; one with an endpoint does', async () => {
    // Not @opentelemetry/api: prom-client (the metrics plugin) loads that small package itself.
    const sdk = [
      '@opentelemetry/sdk-trace-base',
      '@opentelemetry/exporter-trace-otlp-proto',
      '@opentelemetry/resources',
      '@opentelemetry/core',
    ];
    expect(await demoGatewayLoads({}, sdk)).toBe(0);
    expect(await demoGatewayLoads({ tracing: { otlpEndpoint: 'http://127.0.0.1:9/v1/traces' } }, sdk)).toBeGreaterThan(0);
  }, 60_000);

  it('is turned on by OTEL_EXPORTER_OTLP_ENDPOINT (as a base URL) unless the config names an endpoint', () => {
    const fromEnv = buildConfig(chatConfigInput(), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' } });
    expect(fromEnv.tracing.otlpEndpoint).toBe('http://collector:4318/v1/traces');
    const configured = buildConfig(
      { ...chatConfigInput(), tracing: { otlpEndpoint: 'http://mine:4318/v1/traces' } },
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' } },
    );
    expect(configured.tracing.otlpEndpoint).toBe('http://mine:4318/v1/traces');
  });
});
