import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { Caller, ServiceEntry } from '../directory.js';
import { gatewayError, toGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Pipeline } from '../pipeline.js';
import { toApiErrorProto } from './api-error.js';
import type { Gate, GateRequest } from './gate.js';
import {
  GateHeaders,
  type ClientRequestProto,
  type ClientResponseProto,
  type PartialPredictRequestProto,
  type PayloadProto,
  type StringMap,
} from '../../proto/src/index.js';
import type { ServiceAnswer, ServiceCall } from './service-call.js';

type Unary = grpc.handleUnaryCall<ClientRequestProto, ClientResponseProto>;
type ServerStreaming = grpc.ServerWritableStream<ClientRequestProto, ClientResponseProto>;
type Bidi = grpc.ServerDuplexStream<ClientRequestProto, ClientResponseProto>;

/**
 * The client calls of the Gate service. `authToken` is an API key with MODEL_REQUESTS; `account` and
 * `model` address the service by ID or name; errors come back in-band as ClientResponseProto.error.
 */
export class ClientCalls {
  readonly #pipeline: Pipeline;
  readonly #gate: Gate;
  readonly #log: Logger;

  constructor(pipeline: Pipeline, gate: Gate, log: Logger) {
    this.#pipeline = pipeline;
    this.#gate = gate;
    this.#log = log.child({ component: 'grpc-client' });
  }

  readonly process: Unary = (call, callback) => {
    const abort = abortOnCancel(call);
    this.#run(call.request, abort.signal)
      .then((c) => c.final())
      .then((answer) => callback(null, toClientResponse(answer) ?? this.#errorResponse(unexpectedAnswer(answer))))
      .catch((err: unknown) => callback(null, this.#errorResponse(err)))
      .finally(abort.dispose);
  };

  readonly processResponseStream = (call: ServerStreaming): void => {
    const abort = abortOnCancel(call);
    void (async () => {
      try {
        const serviceCall = await this.#run(call.request, abort.signal);
        for await (const answer of serviceCall) {
          const response = toClientResponse(answer);
          if (response) call.write(response);
        }
      } catch (err) {
        if (!abort.signal.aborted) call.write(this.#errorResponse(err));
      } finally {
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

    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      serviceCall?.cancel(toGatewayError(err));
      if (!abort.signal.aborted) call.write(this.#errorResponse(err));
      abort.dispose();
      call.end();
    };
    const pump = async (c: ServiceCall) => {
      try {
        for await (const answer of c) {
          const response = toClientResponse(answer);
          if (response) call.write(response);
        }
        abort.dispose();
        call.end();
      } catch (err) {
        fail(err);
      }
    };

    call.on('data', (request: ClientRequestProto) => {
      if (failed || sentFinish) return;
      try {
        const part = asPartial(request);
        if (!serviceCall) {
          const { caller, service } = this.#admit(request);
          this.#validate(service, part.config);
          part.start = true;
          if (part.finish) sentFinish = true;
          serviceCall = this.#gate.open(service, { partialPredict: part }, this.#openOptions(request, caller, abort.signal));
          void pump(serviceCall);
          return;
        }
        if (held) serviceCall.send(held);
        held = part;
        if (part.finish) {
          sentFinish = true;
          serviceCall.send(part);
          held = undefined;
        }
      } catch (err) {
        fail(err);
      }
    });
    call.on('end', () => {
      if (failed) return;
      if (!serviceCall) return fail(gatewayError('VALIDATION_FAILED', { args: { reason: 'processStream ended before its first message' } }));
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

  async #run(request: ClientRequestProto, signal: AbortSignal): Promise<ServiceCall> {
    const { caller, service } = this.#admit(request);
    const body = clientRequestBody(request);
    if ('predict' in body) this.#validate(service, body.predict.config);
    return this.#gate.open(service, body, this.#openOptions(request, caller, signal));
  }

  #admit(request: ClientRequestProto): { caller: Caller; service: ServiceEntry } {
    return this.#pipeline.admit({
      apiKey: request.authToken,
      keyHeader: 'authToken',
      permission: 'MODEL_REQUESTS',
      account: request.account ?? '',
      model: request.model ?? '',
    });
  }

  #validate(service: ServiceEntry, config: PayloadProto | undefined): void {
    if (!config?.json) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(config.json);
    } catch (err) {
      throw gatewayError('MALFORMED_JSON', { param: 'config', args: { reason: (err as Error).message } });
    }
    this.#pipeline.validateConfig(service, parsed);
  }

  #openOptions(request: ClientRequestProto, caller: Caller, signal: AbortSignal) {
    const headers: StringMap = { ...(request.headers ?? {}) };
    headers[GateHeaders.requestId] ??= randomUUID();
    headers[GateHeaders.callerAccountId] = String(caller.account.id);
    headers[GateHeaders.apiKeyName] = caller.keyName;
    const timeoutSec = request.timeoutSec ?? 0;
    return { headers, signal, timeoutMs: timeoutSec > 0 ? timeoutSec * 1000 : undefined };
  }

  #errorResponse(err: unknown): ClientResponseProto {
    const error = toGatewayError(err);
    if (error.status >= 500) this.#log.warn({ code: error.code, err: error.cause ?? error.message }, 'client call failed');
    return { error: toApiErrorProto(error) };
  }
}

function clientRequestBody(request: ClientRequestProto): GateRequest {
  if (request.body === 'ext' && request.ext) return { ext: request.ext };
  if (request.body === 'partialPredict' && request.partialPredict) return { partialPredict: { ...request.partialPredict, start: true, finish: true } };
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

/** An AbortSignal that fires when the gRPC caller cancels or goes away. */
function abortOnCancel(call: { on(e: "cancelled", f: () => void): unknown; off(e: "cancelled", f: () => void): unknown }): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onCancel = () => controller.abort();
  call.on('cancelled', onCancel);
  return { signal: controller.signal, dispose: () => call.off('cancelled', onCancel) };
}
