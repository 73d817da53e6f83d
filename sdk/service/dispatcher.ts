import type {
  BatchPayloadResponseProto,
  GateToServiceProto,
  PartialPredictResponseProto,
  PayloadProto,
  ServiceInfoProto,
  ServiceToGateBodies,
  ServiceToGateProto,
  StringMap,
} from '@model-gateway/protocol';
import { GateHeaders, SERVER_TIME_HEADER, encodeLoadReport } from '@model-gateway/protocol';
import { Payload } from '../payload.js';
import { LazyAbort } from './abort.js';
import { AsyncQueue } from './async-queue.js';
import { FitContext, RequestContext, type RequestContextInit } from './context.js';
import { extParamTexts } from './ext-in-slices.js';
import { RequestCancelledError, ServiceError, ServiceErrorCodes, apiError, toApiErrorProto } from './errors.js';
import type { BatchResult, ModelHandlers, ModelResponse, PartialPredictChunk, PredictResult } from './handlers.js';
import type { SdkLogger } from './logger.js';
import { isAsyncIterable, mergeHeaders, toModelResponse } from './output.js';
import type { InflightRequest, StreamSession } from './session.js';

export interface DispatcherEnv {
  logger: SdkLogger;
  serviceInfo: () => ServiceInfoProto | undefined;
}

/** One request being served: its context, its session and how its answers are built. */
class RequestScope<C extends RequestContext = RequestContext> {
  finished = false;

  constructor(
    readonly session: StreamSession,
    readonly ctx: C,
    readonly inflight: InflightRequest,
  ) {}

  get requestId(): number {
    return this.ctx.requestId;
  }

  /** Builds the envelope; final answers also carry Z-Server-Time. */
  envelope<K extends keyof ServiceToGateBodies>(
    key: K,
    body: ServiceToGateBodies[K],
    final: boolean,
    extra?: StringMap,
  ): ServiceToGateProto {
    const timing = final ? { [SERVER_TIME_HEADER]: String(this.ctx.elapsedMs()) } : undefined;
    const headers = mergeHeaders(this.ctx.responseHeaders, extra, timing);
    const message: ServiceToGateProto = { requestId: this.requestId, [key]: body };
    if (headers) message.headers = headers;
    return message;
  }

  /** Sends a terminal answer unless the request was cancelled or already answered. */
  answer<K extends keyof ServiceToGateBodies>(key: K, body: ServiceToGateBodies[K], extra?: StringMap): void {
    if (this.finished || this.ctx.cancelled) return;
    this.finished = true;
    if (!this.session.send(this.envelope(key, body, true, extra))) {
      this.ctx.logger.warn({ gateway: this.session.gateway, requestId: this.requestId }, 'model-sdk: answer dropped, its stream is closed');
    }
  }

  fail(err: unknown): void {
    if (this.finished || this.ctx.cancelled) return;
    const error = toApiErrorProto(err);
    const log = error.statusCode !== undefined && error.statusCode < 500 ? this.ctx.logger.info : this.ctx.logger.error;
    log.call(this.ctx.logger, { requestId: this.requestId, code: error.code, err }, 'model-sdk: request failed');
    this.answer('error', error);
  }
}

/** A partialPredict frame of one streamed answer (headers are added by the caller). */
function frameOf(response: ModelResponse, start: boolean, finish: boolean, statusCode: number | undefined): PartialPredictResponseProto {
  return {
    data: response.data,
    ...(start ? { start: true } : {}),
    ...(finish ? { finish: true } : {}),
    ...(statusCode !== undefined ? { statusCode } : {}),
  };
}

/** Runs gateway requests through the handlers and sends their answers on the session they came in on. */
export class Dispatcher {
  constructor(
    private readonly handlers: ModelHandlers,
    private readonly env: DispatcherEnv,
  ) {}

  /** The heartBeat headers of the handlers' load report (empty when they report none or it fails). */
  loadHeaders(): StringMap | undefined {
    if (!this.handlers.load) return undefined;
    try {
      return encodeLoadReport(this.handlers.load());
    } catch (err) {
      this.env.logger.warn({ err }, 'model-sdk: the load() handler failed; heartBeat sent without a load report');
      return undefined;
    }
  }

  dispatch(session: StreamSession, message: GateToServiceProto): void {
    const requestId = message.requestId ?? 0;
    if (message.body === 'partialPredict') {
      this.onPartialPredict(session, message);
      return;
    }
    if (!session.accepting) {
      this.refuseDraining(session, requestId, message.headers);
      return;
    }
    switch (message.body) {
      case 'predict':
        this.run(session, message, async (scope) => {
          const handler = this.handlers.predict;
          if (!handler) throw ServiceError.methodNotSupported('predict');
          const request = message.predict ?? {};
          const result = await handler.call(
            this.handlers,
            {
              data: new Payload(request.data ?? {}, 'data'),
              config: request.config ? new Payload(request.config, 'config') : undefined,
            },
            scope.ctx,
          );
          await this.answerPrediction(scope, result, 'predict');
        });
        return;
      case 'ext':
        this.run(session, message, async (scope) => {
          const handler = this.handlers.ext;
          if (!handler) throw ServiceError.methodNotSupported('ext');
          const methodName = message.ext?.methodName ?? '';
          const result = await handler.call(this.handlers, methodName, await extParamTexts(message, scope.ctx), scope.ctx);
          if (isAsyncIterable(result))
            throw new ServiceError(ServiceErrorCodes.processingException, 'An ext handler cannot stream its answer', 500);
          const response = toModelResponse(result);
          const headers = mergeHeaders(scope.ctx.responseHeaders, response.headers);
          const statusCode = response.statusCode ?? scope.ctx.statusCode;
          scope.answer(
            'ext',
            { data: response.data, ...(headers ? { headers } : {}), ...(statusCode !== undefined ? { statusCode } : {}) },
            response.headers,
          );
        });
        return;
      case 'batch':
        this.run(session, message, (scope) => this.onBatch(scope, message));
        return;
      case 'fit':
        this.run(
          session,
          message,
          async (scope) => {
            const handler = this.handlers.fit;
            if (!handler) throw ServiceError.methodNotSupported('fit');
            const fit = message.fit ?? {};
            await handler.call(
              this.handlers,
              {
                trainData: new Payload(fit.trainData ?? {}, 'trainData'),
                targetsData: fit.targetsData ? new Payload(fit.targetsData, 'targetsData') : undefined,
                config: fit.config ? new Payload(fit.config, 'config') : undefined,
                modelDir: fit.modelDir ?? '',
                previousModelDir: fit.previousModelDir,
                targetServiceInfo: fit.targetServiceInfo,
                datasetInfo: fit.datasetInfo,
              },
              scope.ctx as FitContext,
            );
            scope.answer('fit', {});
          },
          true,
        );
        return;
      case 'status':
        this.run(session, message, async (scope) => {
          const handler = this.handlers.status;
          if (!handler) throw ServiceError.methodNotSupported('status');
          scope.answer('status', await handler.call(this.handlers, scope.ctx));
        });
        return;
      default:
        this.run(session, message, () => {
          throw ServiceError.methodNotSupported(message.body ?? 'unknown');
        });
    }
  }

  /** `cancel{requestIdToCancel}`: abort that request's signal; no reply. */
  cancel(session: StreamSession, requestId: number): void {
    const request = session.inflight.get(requestId);
    if (!request) {
      // The gateway is done with it: none of its chunks will follow.
      session.endedStreams.delete(requestId);
      return;
    }
    request.controller.abort(new RequestCancelledError(`Request ${requestId} was cancelled by the gateway`));
    request.input?.fail(request.controller.reason);
  }

  private context(session: StreamSession, message: GateToServiceProto, controller: LazyAbort, fit: boolean): RequestContext {
    const init: RequestContextInit = {
      requestId: message.requestId ?? 0,
      headers: { ...(message.headers ?? {}) },
      abort: controller,
      gateway: session.gateway,
      serviceInfo: this.env.serviceInfo,
      logger: this.env.logger,
    };
    if (!fit) return new RequestContext(init);
    const requestId = init.requestId;
    return new FitContext(init, (percentage) => {
      session.send({ requestId, fitStatus: { percentage } });
    });
  }

  /** Registers the request as in flight, runs the body, maps a throw to an `error` answer, and untracks it. */
  private run(
    session: StreamSession,
    message: GateToServiceProto,
    body: (scope: RequestScope) => void | Promise<void>,
    fit = false,
    input?: AsyncQueue<PartialPredictChunk>,
  ): RequestScope {
    const controller = new LazyAbort();
    const inflight: InflightRequest = input ? { controller, input } : { controller };
    const scope = new RequestScope(session, this.context(session, message, controller, fit), inflight);
    const requestId = scope.requestId;
    if (session.inflight.has(requestId)) {
      this.env.logger.warn({ gateway: session.gateway, requestId }, 'model-sdk: a request with this requestId is already in flight');
    }
    session.track(requestId, inflight);
    void (async () => {
      try {
        await body(scope);
      } catch (err) {
        scope.fail(err);
      } finally {
        session.untrack(requestId, inflight);
        if (input && !input.producerDone) {
          // The handler returned or threw before the input's finish (inside its `for await` or not):
          // chunks the gateway sent before it had the answer may still come; they are not a new request.
          input.end();
          session.endedStreams.add(requestId);
        }
      }
    })();
    return scope;
  }

  private refuseDraining(session: StreamSession, requestId: number, headers: StringMap | undefined): void {
    if (requestId === 0) return;
    const correlation = headers?.[GateHeaders.requestId];
    session.send({
      requestId,
      ...(correlation !== undefined ? { headers: { [GateHeaders.requestId]: correlation } } : {}),
      error: apiError(ServiceErrorCodes.channelClosed, 'This connection of the service is shutting down', 503, {}),
    });
  }

  /** A single answer as `predict` (or `partialPredict{start,finish}` for streamed requests); an async iterable as partialPredict frames. */
  private async answerPrediction(scope: RequestScope, result: PredictResult, single: 'predict' | 'partialPredict'): Promise<void> {
    if (isAsyncIterable(result)) {
      await this.streamOut(scope, result);
      return;
    }
    const response = toModelResponse(result);
    const headers = mergeHeaders(scope.ctx.responseHeaders, response.headers);
    const statusCode = response.statusCode ?? scope.ctx.statusCode;
    const common = { data: response.data, ...(headers ? { headers } : {}), ...(statusCode !== undefined ? { statusCode } : {}) };
    if (single === 'predict') scope.answer('predict', common, response.headers);
    else scope.answer('partialPredict', { ...common, start: true, finish: true }, response.headers);
  }

  /**
   * Streams an async iterable as partialPredict frames, looking one chunk ahead as the Python SDK does:
   * `start` on the first frame, `finish` on the last. An empty iterable sends one data-less
   * `partialPredict{start, finish}` so that the caller is never left waiting.
   */
  private async streamOut(scope: RequestScope, iterable: AsyncIterable<unknown>): Promise<void> {
    const { ctx, session } = scope;
    const iterator = iterable[Symbol.asyncIterator]();
    let completed = false;
    try {
      let current = await iterator.next();
      if (current.done) {
        completed = true;
        scope.answer('partialPredict', {
          start: true,
          finish: true,
          ...(ctx.statusCode !== undefined ? { statusCode: ctx.statusCode } : {}),
        });
        return;
      }
      if (ctx.eagerFrames) {
        completed = await this.streamEagerly(scope, iterator, current);
        return;
      }
      let first = true;
      let sentHeaders: StringMap = {};
      for (;;) {
        if (ctx.cancelled) return;
        const response = toModelResponse(current.value);
        const statusCode = response.statusCode ?? (first ? ctx.statusCode : undefined);
        let next: IteratorResult<unknown>;
        try {
          next = await iterator.next();
        } catch (err) {
          // The chunk held back for the look-ahead still goes out, then the error ends the stream.
          if (!ctx.cancelled) {
            await session.sendAsync(scope.envelope('partialPredict', frameOf(response, first, false, statusCode), false, response.headers));
          }
          throw err;
        }
        if (ctx.cancelled) return;
        const last = next.done === true;
        // Each frame carries the headers that are new or changed since the previous frame.
        const all = mergeHeaders(ctx.responseHeaders, response.headers) ?? {};
        const fresh: StringMap = {};
        for (const [k, v] of Object.entries(all)) if (sentHeaders[k] !== v) fresh[k] = v;
        sentHeaders = all;
        const frame = {
          ...frameOf(response, first, last, statusCode),
          ...(Object.keys(fresh).length > 0 ? { headers: fresh } : {}),
        };
        if (last) {
          completed = true;
          scope.answer('partialPredict', frame, response.headers);
          return;
        }
        if (!(await session.sendAsync(scope.envelope('partialPredict', frame, false, response.headers)))) return;
        first = false;
        current = next;
      }
    } finally {
      if (!completed) {
        // Cancelled, failed, or the stream dropped: let the generator clean up without waiting on it.
        void Promise.resolve(iterator.return?.()).catch(() => {});
      }
    }
  }

  /**
   * `ctx.eagerFrames`: every frame goes out when it is yielded; a data-less `finish` frame ends the
   * stream. Resolves true when the iterable was read to its end.
   */
  private async streamEagerly(
    scope: RequestScope,
    iterator: AsyncIterator<unknown>,
    firstResult: IteratorResult<unknown>,
  ): Promise<boolean> {
    const { ctx, session } = scope;
    let first = true;
    let sentHeaders: StringMap = {};
    for (let current = firstResult; ; current = await iterator.next()) {
      if (ctx.cancelled) return false;
      if (current.done) {
        const statusCode = first ? ctx.statusCode : undefined;
        scope.answer('partialPredict', {
          ...(first ? { start: true } : {}),
          finish: true,
          ...(statusCode !== undefined ? { statusCode } : {}),
        });
        return true;
      }
      const response = toModelResponse(current.value);
      const statusCode = response.statusCode ?? (first ? ctx.statusCode : undefined);
      const all = mergeHeaders(ctx.responseHeaders, response.headers) ?? {};
      const fresh: StringMap = {};
      for (const [k, v] of Object.entries(all)) if (sentHeaders[k] !== v) fresh[k] = v;
      sentHeaders = all;
      const frame = { ...frameOf(response, first, false, statusCode), ...(Object.keys(fresh).length > 0 ? { headers: fresh } : {}) };
      if (!(await session.sendAsync(scope.envelope('partialPredict', frame, false, response.headers)))) return false;
      first = false;
    }
  }

  private async onBatch(scope: RequestScope, message: GateToServiceProto): Promise<void> {
    const batch = message.batch ?? {};
    const config = batch.config ? new Payload(batch.config, 'config') : undefined;
    const items = (batch.data ?? []).map((item) => ({
      requestId: item.requestId ?? 0,
      data: new Payload(item.data ?? {}, 'data'),
      headers: { ...(item.headers ?? {}) },
    }));
    let results: BatchResult[];
    if (this.handlers.batch) {
      results = await this.handlers.batch(items, config, scope.ctx);
      if (!Array.isArray(results) || results.length !== items.length) {
        throw new Error(`The batch handler returned ${Array.isArray(results) ? results.length : 'no'} results for ${items.length} items`);
      }
    } else if (this.handlers.predict) {
      const predict = this.handlers.predict;
      results = await Promise.all(
        items.map(async (item): Promise<BatchResult> => {
          try {
            const result = await predict.call(this.handlers, { data: item.data, config }, scope.ctx);
            if (isAsyncIterable(result)) {
              return new ServiceError(ServiceErrorCodes.noPartialInBatch, 'A streamed answer cannot be part of a batch', 400);
            }
            return result;
          } catch (err) {
            return err instanceof Error ? err : new Error(String(err));
          }
        }),
      );
    } else {
      throw ServiceError.methodNotSupported('batch');
    }
    const data = items.map((item, index): BatchPayloadResponseProto => {
      const result = results[index];
      if (result instanceof Error) return { requestId: item.requestId, error: toApiErrorProto(result) };
      const response = toModelResponse(result);
      const predict = {
        data: response.data as PayloadProto,
        ...(response.headers ? { headers: response.headers } : {}),
        ...(response.statusCode !== undefined ? { statusCode: response.statusCode } : {}),
      };
      return { requestId: item.requestId, predict, ...(response.headers ? { headers: response.headers } : {}) };
    });
    scope.answer('batch', { data });
  }

  /**
   * Incoming partialPredict: the first message of a requestId starts one handler invocation; later messages
   * with the same requestId feed its input until `finish`. Messages without data only carry flags.
   */
  private onPartialPredict(session: StreamSession, message: GateToServiceProto): void {
    const requestId = message.requestId ?? 0;
    const part = message.partialPredict ?? {};
    const chunk: PartialPredictChunk | undefined = part.data
      ? {
          data: new Payload(part.data, 'data'),
          config: part.config ? new Payload(part.config, 'config') : undefined,
          start: part.start === true,
          finish: part.finish === true,
        }
      : undefined;
    const finish = part.finish === true;

    if (session.endedStreams.has(requestId)) {
      if (finish) session.endedStreams.delete(requestId);
      return;
    }
    const existing = session.inflight.get(requestId);
    if (existing?.input) {
      if (chunk) existing.input.push(chunk);
      if (finish) existing.input.end();
      return;
    }
    if (!session.accepting) {
      this.refuseDraining(session, requestId, message.headers);
      if (!finish) session.endedStreams.add(requestId);
      return;
    }
    const input = new AsyncQueue<PartialPredictChunk>();
    if (chunk) input.push(chunk);
    if (finish) input.end();
    const handler = this.handlers.partialPredict;
    this.run(
      session,
      message,
      async (scope) => {
        if (!handler) throw ServiceError.methodNotSupported('partialPredict');
        const result = await handler.call(this.handlers, input, scope.ctx);
        await this.answerPrediction(scope, result, 'partialPredict');
      },
      false,
      input,
    );
  }
}
