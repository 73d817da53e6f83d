import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { Caller, ServiceEntry } from '../admission/directory.js';
import { gatewayError, toGatewayError, type GatewayError } from '../errors.js';
import { abortOnCancel, drained } from '../flow/drain-and-cancel.js';
import type { Logger } from '../observe/logger.js';
import { GatewayEvents } from '../observe/events.js';
import { isLimitRejection } from '../observe/rejections.js';
import { isExpectedCondition } from '../observe/expected-conditions.js';
import { RequestRecord } from '../observe/request-record.js';
import type { CallTrace, CallTracer } from '../observe/request-trace.js';
import type { Pipeline } from '../admission/pipeline.js';
import { DEFAULT_JSON_MAX_DEPTH, DEFAULT_JSON_SIZE_LIMITS, parseJson, type JsonSizeLimits } from '../validation/json.js';
import { toApiErrorProto } from './api-error.js';
import type { ClientMessage } from './client-message.js';
import { callContext } from '../gate/call-context.js';
import { serviceHeaders } from '../gate/service-headers.js';
import type { Gate, GateRequest } from '../gate/gate.js';
import type { ClientRequestProto, ClientResponseProto, PartialPredictRequestProto, PayloadProto } from '../../proto/src/index.js';
import type { ServiceAnswer, ServiceCall } from '../gate/service-call.js';

// Requests arrive as ClientMessages (see client-message.ts): admission runs before the full decode.
type Unary = grpc.handleUnaryCall<ClientMessage, ClientResponseProto>;
type ServerStreaming = grpc.ServerWritableStream<ClientMessage, ClientResponseProto>;
type Bidi = grpc.ServerDuplexStream<ClientMessage, ClientResponseProto>;

/**
 * The client calls of the Gate service. `authToken` is an API key with MODEL_REQUESTS; `account` and
 * `model` address the service by ID or name; errors come back in-band as ClientResponseProto.error.
 */
export class ClientCalls {
  readonly #pipeline: Pipeline;
  readonly #gate: Gate;
  readonly #log: Logger;
  readonly #jsonMaxDepth: number;
  readonly #jsonSize: JsonSizeLimits;
  readonly #events: GatewayEvents;
  #tracer: CallTracer | undefined = undefined;

  constructor(
    pipeline: Pipeline,
    gate: Gate,
    log: Logger,
    events: GatewayEvents = new GatewayEvents(),
    jsonMaxDepth = DEFAULT_JSON_MAX_DEPTH,
    jsonSize: JsonSizeLimits = DEFAULT_JSON_SIZE_LIMITS,
  ) {
    this.#pipeline = pipeline;
    this.#gate = gate;
    this.#events = events;
    this.#jsonMaxDepth = jsonMaxDepth;
    this.#jsonSize = jsonSize;
    this.#log = log.child({ component: 'grpc-client' });
  }

  /** Traces every client call from now on (tracing on). */
  traceCalls(tracer: CallTracer): void {
    this.#tracer = tracer;
  }

  readonly process: Unary = (call, callback) => {
    const abort = abortOnCancel(call);
    const record = this.#record('process', call.metadata);
    const started = performance.now();
    this.#run(call.request, abort.signal, record)
      .then(({ serviceCall, service }) => serviceCall.final(service.name))
      .then((answer) => {
        const response = toClientResponse(answer);
        if (!response) throw unexpectedAnswer(answer);
        this.#observed('process', record, started, undefined);
        callback(null, response);
      })
      .catch((err: unknown) => {
        this.#observed('process', record, started, toGatewayError(err));
        callback(null, this.#errorResponse(err));
      })
      .finally(abort.dispose);
  };

  readonly processResponseStream = (call: ServerStreaming): void => {
    const abort = abortOnCancel(call);
    let release: (() => void) | undefined;
    const record = this.#record('processResponseStream', call.metadata);
    const started = performance.now();
    void (async () => {
      let failure: GatewayError | undefined;
      try {
        const { caller, service } = this.#admit(call.request, record);
        release = this.#pipeline.openStream(caller);
        await this.#gate.ready(service, caller.account, abort.signal);
        const serviceCall = this.#start(call.request.decode(), caller, service, abort.signal, record);
        for await (const answer of serviceCall) {
          const response = toClientResponse(answer);
          // A caller that stops reading leaves the answers in the call, whose bound (CALLER_TOO_SLOW) ends it.
          if (response && !call.write(response)) await drained(call, [abort.signal, serviceCall.failedSignal]);
        }
      } catch (err) {
        failure = toGatewayError(err);
        if (!abort.signal.aborted) call.write(this.#errorResponse(err));
      } finally {
        this.#observed('processResponseStream', record, started, failure);
        release?.();
        abort.dispose();
        call.end();
      }
    })();
  };

  /**
   * Client messages go to one instance as one partialPredict request: `start` on the first, `finish`
   * on the last. One message is held back so that `finish` rides on a message with data even when the
   * client sets neither flag and just half-closes.
   */
  readonly processStream = (call: Bidi): void => {
    const abort = abortOnCancel(call);
    let serviceCall: ServiceCall | undefined;
    let held: PartialPredictRequestProto | undefined;
    let sentFinish = false;
    let failed = false;
    let release: (() => void) | undefined;
    const record = this.#record('processStream', call.metadata);
    const started = performance.now();

    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      this.#observed('processStream', record, started, toGatewayError(err));
      release?.();
      serviceCall?.cancel(toGatewayError(err));
      if (!abort.signal.aborted) call.write(this.#errorResponse(err));
      abort.dispose();
      call.end();
    };
    const pump = async (c: ServiceCall) => {
      try {
        for await (const answer of c) {
          const response = toClientResponse(answer);
          if (response && !call.write(response)) await drained(call, [abort.signal, c.failedSignal]);
        }
        this.#observed('processStream', record, started, undefined);
        release?.();
        abort.dispose();
        call.end();
      } catch (err) {
        fail(err);
      }
    };

    call.on('data', (message: ClientMessage) => {
      if (failed || sentFinish) return;
      try {
        if (!serviceCall) {
          const { caller, service } = this.#admit(message, record);
          release = this.#pipeline.openStream(caller);
          const request = message.decode();
          const part = asPartial(request);
          this.#validate(service, part.config, record);
          part.start = true;
          if (part.finish) sentFinish = true;
          // The caller's next messages wait (paused: no 'data', no 'end') until the service can take
          // the first one: at once, or after waiting for an instance to connect or wake.
          call.pause();
          void this.#gate
            .ready(service, caller.account, abort.signal)
            .then(() => {
              if (failed) return;
              serviceCall = this.#gate.open(
                service,
                { partialPredict: part },
                this.#openOptions(request, caller, service, abort.signal, record),
              );
              void pump(serviceCall);
              call.resume();
            })
            .catch(fail);
          return;
        }
        const part = asPartial(message.decode());
        if (held) serviceCall.send(held);
        held = part;
        if (part.finish) {
          sentFinish = true;
          serviceCall.send(part);
          held = undefined;
        }
        // Back-pressure: stop reading the caller while the service stream is full (a frozen service),
        // so gRPC flow control slows the caller instead of the gateway buffering its messages.
        const current = serviceCall;
        call.pause();
        void current.whenWritable().then(() => {
          if (!failed) call.resume();
        });
      } catch (err) {
        fail(err);
      }
    });
    call.on('end', () => {
      if (failed) return;
      if (!serviceCall)
        return fail(gatewayError('VALIDATION_FAILED', { args: { reason: 'processStream ended before its first message' } }));
      if (!sentFinish) {
        // The first message went out with start; close the request with finish on the held message,
        // or on an empty frame when the client sent only one message.
        serviceCall.send({ ...(held ?? {}), finish: true });
        held = undefined;
        sentFinish = true;
      }
    });
    call.on('error', (err) => fail(err));
  };

  async #run(
    message: ClientMessage,
    signal: AbortSignal,
    record: RequestRecord,
  ): Promise<{ serviceCall: ServiceCall; service: ServiceEntry }> {
    const { caller, service } = this.#admit(message, record);
    // Like sync predict over HTTP: a service with no instance is waited for (and woken) when it says so.
    await this.#gate.ready(service, caller.account, signal);
    return { serviceCall: this.#start(message.decode(), caller, service, signal, record), service };
  }

  #start(request: ClientRequestProto, caller: Caller, service: ServiceEntry, signal: AbortSignal, record: RequestRecord): ServiceCall {
    const body = clientRequestBody(request);
    if ('predict' in body) this.#validate(service, body.predict.config, record);
    return this.#gate.open(service, body, this.#openOptions(request, caller, service, signal, record));
  }

  /** A call's record, with its trace when tracing is on (parented on the caller's `traceparent` metadata). */
  #record(method: string, metadata: grpc.Metadata): RequestRecord {
    const record = new RequestRecord();
    if (this.#tracer) {
      const traceparent = metadata.get('traceparent')[0];
      record.trace = this.#tracer.start(method, typeof traceparent === 'string' ? traceparent : undefined);
    }
    return record;
  }

  /** A client call ended: its trace, the `grpcCall` event, and a `rejection` when a limit refused it. */
  #observed(method: string, record: RequestRecord, started: number, failure: GatewayError | undefined): void {
    if (failure && isLimitRejection(failure)) this.#events.emit('rejection', { code: failure.code });
    const { service: traced } = record;
    // #record put a CallTrace there (RequestRecord holds the trace under its HTTP-and-gRPC interface).
    (record.trace as CallTrace | undefined)?.finish(failure?.code ?? 'OK', failure?.status ?? 200, {
      service: traced && `${traced.account.name}/${traced.name}`,
      inputTokens: record.inputTokens,
      outputTokens: record.outputTokens,
    });
    if (!this.#events.has('grpcCall')) return;
    const { caller, service } = record;
    this.#events.emit('grpcCall', {
      method,
      service: service && `${service.account.name}/${service.name}`,
      account: caller?.account.name,
      keyName: caller?.keyName,
      keyId: caller?.keyId,
      code: failure?.code ?? 'OK',
      durationMs: performance.now() - started,
      serviceWaitMs: record.serviceWaitMs,
    });
  }

  /** Admission from the fields the preflight read: the key is checked before the message is decoded. */
  #admit(message: ClientMessage, record: RequestRecord): { caller: Caller; service: ServiceEntry } {
    record.trace?.enter('admission');
    if (message.refused) throw message.refused;
    return this.#pipeline.admit({
      apiKey: message.authToken,
      keyHeader: 'authToken',
      permission: 'MODEL_REQUESTS',
      account: message.account,
      model: message.model,
    });
  }

  #validate(service: ServiceEntry, config: PayloadProto | undefined, record: RequestRecord): void {
    record.trace?.enter('validation');
    if (!config?.json) return;
    this.#pipeline.validateConfig(service, parseJson(config.json, 'config', this.#jsonMaxDepth, this.#jsonSize));
  }

  /** How a client call opens its service call: its context (made here, where it was admitted) and deadline. */
  #openOptions(request: ClientRequestProto, caller: Caller, service: ServiceEntry, signal: AbortSignal, record: RequestRecord) {
    const headers = serviceHeaders(
      { requestId: randomUUID(), callerAccountId: caller.account.id, keyName: caller.keyName },
      request.headers,
    );
    const timeoutSec = request.timeoutSec ?? 0;
    return { context: callContext(caller, headers, record, service, signal), timeoutMs: timeoutSec > 0 ? timeoutSec * 1000 : undefined };
  }

  #errorResponse(err: unknown): ClientResponseProto {
    const error = toGatewayError(err);
    if (error.status >= 500) {
      if (isExpectedCondition(error)) this.#log.warn({ code: error.code, status: error.status }, `client call failed: ${error.message}`);
      else this.#log.warn({ code: error.code, err: error.cause ?? error.message }, 'client call failed');
    }
    return { error: toApiErrorProto(error) };
  }
}

function clientRequestBody(request: ClientRequestProto): GateRequest {
  if (request.body === 'ext' && request.ext) return { ext: request.ext };
  if (request.body === 'partialPredict' && request.partialPredict)
    return { partialPredict: { ...request.partialPredict, start: true, finish: true } };
  if (request.body === 'predict' && request.predict) return { predict: request.predict };
  throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'the request carries none of predict, ext, partialPredict' } });
}

function unexpectedAnswer(answer: ServiceAnswer) {
  return gatewayError('SERVICE_BAD_RESPONSE', { args: { reason: `a ${answer.body ?? 'bodiless'} frame answered a client call` } });
}

function asPartial(request: ClientRequestProto): PartialPredictRequestProto {
  if (request.body === 'partialPredict' && request.partialPredict) return { ...request.partialPredict };
  if (request.body === 'predict' && request.predict) return { data: request.predict.data, config: request.predict.config };
  throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'processStream messages carry predict or partialPredict' } });
}

/** The client-facing form of an answer; null for frames a client call does not carry (fitStatus). */
function toClientResponse(answer: ServiceAnswer): ClientResponseProto | null {
  const headers = answer.headers ?? {};
  switch (answer.body) {
    case 'predict':
      return { headers, predict: answer.predict };
    case 'partialPredict':
      return { headers, partialPredict: answer.partialPredict };
    case 'ext':
      return { headers, ext: answer.ext };
    default:
      return null;
  }
}
