/**
 * The model behind an upstream service's in-process instance: it takes the predict requests the Gate
 * routes to it, calls the HTTP engine over a pool of keep-alive connections, and answers the way a
 * dialled-in model service does (one `predict`, or `partialPredict` frames as the engine streams,
 * or `error`). `cancel` aborts the engine request, which closes its connection. An engine that
 * counts tokens (Anthropic's) also answers the ext call `count_tokens` (the Messages routes' own).
 */
import { createRequire } from 'node:module';
import type { Pool } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import {
  GateHeaders,
  gatewayError,
  isRelayedUpstreamHeader,
  parseJson,
  toGatewayError,
  type ApiErrorProto,
  type GateToServiceProto,
  type GatewayError,
  type LocalReply,
  type LocalWorker,
  type PredictRequestProto,
  type ServiceEntry,
  type ServiceToGateProto,
  type StringMap,
  type UpstreamConfig,
} from '../../core/plugins/index.js';
import { COUNT_TOKENS_METHOD } from '../_shared/anthropic/count-tokens.js';
import { DIALECTS, openAiResponsesDialect, type Dialect } from './dialects.js';
import { engineBody, engineModel, isObject, isResponsesRequestType, ourModel, type Json } from './engine-request.js';
import { FairShare } from './fair-share.js';
import { readSse } from './sse.js';
import { rootPath, tokenCount, tokenizeRequests, TOKENIZE_PATHS } from './tokenize.js';
import { AnswerTooLarge, readBoundedText, requestWholeAnswer, type WholeAnswer, type WholeAnswerCall } from './whole-answer.js';

const requireHere = createRequire(import.meta.url);
/**
 * undici, loaded when the first upstream service builds its pool (require keeps it from then on): the
 * plugin is on in the demo and in most configs, often with no upstream service at all, and undici
 * costs a gateway 0.14 s of start-up and 5 MB of heap. Synchronous, so a service's worker is built as
 * before.
 */
const loadUndici = () => requireHere('undici') as typeof import('undici');

export interface UpstreamWorkerOptions {
  readonly service: ServiceEntry;
  readonly upstream: UpstreamConfig;
  /** The engine's key (from `upstream.apiKeyEnv`); never logged. */
  readonly apiKey: string | undefined;
  /** The longest whole answer held (gate.maxAnswerBytes): a longer one is SERVICE_ANSWER_TOO_LARGE. */
  readonly maxAnswerBytes: number;
}

export class UpstreamWorker implements LocalWorker {
  readonly #service: ServiceEntry;
  readonly #upstream: UpstreamConfig;
  readonly #dialect: Dialect;
  readonly #origin: string;
  /** The engine's keep-alive connections; replaced after a broken stream (#retirePool). */
  #pool: Pool;
  readonly #basePath: string;
  readonly #headers: Record<string, string>;
  /** The request headers of a whole answer and of a stream, made once: most requests add none of the caller's. */
  readonly #wholeHeaders: Record<string, string>;
  readonly #streamHeaders: Record<string, string>;
  readonly #maxAnswerBytes: number;
  /** The engine requests in flight (or waiting for a connection), by requestId, to abort on `cancel`. */
  readonly #inFlight = new Map<number, { abort(): void }>();
  /** When the engine last showed progress on a call (a call taken, a stream event, an answer). */
  #lastProgress = 0;
  /** The engine's connections, shared between the calling accounts. */
  readonly #share: FairShare;

  constructor(options: UpstreamWorkerOptions) {
    const { service, upstream } = options;
    this.#service = service;
    this.#upstream = upstream;
    this.#dialect = DIALECTS[upstream.api];
    this.#maxAnswerBytes = options.maxAnswerBytes;
    const url = new URL(upstream.baseUrl);
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#origin = url.origin;
    this.#share = new FairShare(upstream.maxConcurrency, upstream.maxConcurrencyPerAccount ?? Math.max(1, upstream.maxConcurrency - 1));
    this.#pool = this.#newPool();
    this.#headers = {
      ...upstream.headers,
      ...this.#dialect.headers,
      ...(options.apiKey ? this.#dialect.auth(options.apiKey) : {}),
      'content-type': 'application/json',
    };
    this.#wholeHeaders = { ...this.#headers, accept: 'application/json' };
    this.#streamHeaders = { ...this.#headers, accept: 'text/event-stream' };
  }

  #newPool(): Pool {
    return new (loadUndici().Pool)(this.#origin, {
      connections: this.#upstream.maxConcurrency,
      connect: { timeout: this.#upstream.connectTimeoutMs },
      headersTimeout: this.#upstream.firstByteTimeoutMs,
      bodyTimeout: this.#upstream.idleTimeoutMs,
    });
  }

  /**
   * After a stream that broke (ended without its end marker, or its connection failed): later
   * requests go to a fresh pool, and the old one closes once its requests in flight end. An engine
   * that fails a stream after its 200 headers (llama.cpp's Python server over its context window)
   * may end the chunked body cleanly and then close or wedge the connection: undici has already put
   * it back as idle by then, and the next request sent on it got ECONNRESET, or no answer at all
   * until its deadline. undici says nothing of which connection a request used, so all are renewed;
   * a broken stream is rare, and a reconnect is cheap beside it.
   */
  #retirePool(): void {
    const old = this.#pool;
    this.#pool = this.#newPool();
    void old.close().catch(() => undefined);
  }

  /** Requests in flight to the engine, and connections the pool holds (for tests and the health view). */
  get stats(): { inFlight: number; connected: number; pending: number; running: number } {
    const { connected, pending, running } = this.#pool.stats;
    return { inFlight: this.#inFlight.size, connected, pending, running };
  }

  receive(message: GateToServiceProto, reply: LocalReply): void {
    const requestId = Number(message.requestId ?? 0);
    if (message.cancel) {
      this.#inFlight.get(Number(message.cancel.requestIdToCancel ?? requestId))?.abort();
    } else if (message.predict) {
      void this.#predict(requestId, message.predict, message.headers, reply);
    } else if (message.ext?.methodName === COUNT_TOKENS_METHOD && this.#dialect.countTokensPath) {
      void this.#countTokens(requestId, message.ext.params?.request?.json, message.headers, reply);
    } else if (message.ext?.methodName === COUNT_TOKENS_METHOD && this.#upstream.api === 'openai') {
      void this.#tokenize(requestId, message.ext.params?.request?.json, reply);
    } else if (message.ext || message.batch || message.fit || message.partialPredict) {
      reply({
        requestId,
        error: {
          code: 'platform-action.common.method-not-supported',
          message: `Service '${this.#service.name}' (an HTTP engine) answers predict requests only`,
          statusCode: 400,
        },
      });
    }
    // heartBeat, serviceInfo, stopServing: nothing to do for an engine the gateway calls itself.
  }

  /**
   * Whether the engine is busy with calls and made progress on one within `withinMs`: such an engine
   * is alive, however late it answers a probe (llama.cpp's server answers none while it generates).
   */
  progressing(withinMs: number): boolean {
    return this.#inFlight.size > 0 && performance.now() - this.#lastProgress <= withinMs;
  }

  /** Whether the engine answers its health-check path with a 2xx within the timeout. */
  async healthy(path: string, timeoutMs: number): Promise<boolean> {
    const call = requestWholeAnswer(
      this.#pool,
      { path: this.#basePath + path, method: 'GET', headers: this.#headers },
      this.#maxAnswerBytes,
    );
    const timer = setTimeout(() => call.abort(), timeoutMs);
    try {
      const { statusCode } = await call.answer;
      return statusCode >= 200 && statusCode < 300;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.#share.close();
    for (const controller of this.#inFlight.values()) controller.abort();
    this.#inFlight.clear();
    void this.#pool.destroy().catch(() => undefined);
  }

  /** The request headers for the engine: ours, the caller's that the dialect passes on, the accepted type. */
  #requestHeaders(callerHeaders: StringMap | undefined, stream: boolean): Record<string, string> {
    const base = stream ? this.#streamHeaders : this.#wholeHeaders;
    let headers: Record<string, string> | undefined;
    for (const name of this.#dialect.passedHeaders) {
      const value = headerOf(callerHeaders, name);
      if (value) (headers ??= { ...base })[name] = value;
    }
    return headers ?? base;
  }

  async #predict(requestId: number, predict: PredictRequestProto, callerHeaders: StringMap | undefined, reply: LocalReply): Promise<void> {
    let body: Json;
    try {
      body = engineBody(predict, this.#upstream, this.#service);
    } catch (err) {
      reply({ requestId, error: asProto(this.#failure(err)) });
      return;
    }
    const account = callerAccount(callerHeaders);
    if (!this.#share.tryTake(account) && !(await this.#waitTurn(requestId, account))) return;
    // A Responses body (only an `api: openai` engine gets one: engineBody refuses it for Anthropic's).
    const dialect = isResponsesRequestType(predict.data?.dataType) ? openAiResponsesDialect : this.#dialect;
    const stream = body.stream === true;
    const request = {
      path: this.#basePath + dialect.path(body),
      method: 'POST' as const,
      headers: this.#requestHeaders(callerHeaders, stream),
      body: JSON.stringify(body),
    };
    if (stream) {
      try {
        await this.#predictStreamed(requestId, request, body, dialect, reply);
      } finally {
        this.#share.release(account);
      }
      return;
    }
    const call = requestWholeAnswer(this.#pool, request, this.#maxAnswerBytes);
    this.#inFlight.set(requestId, call);
    this.#lastProgress = performance.now();
    try {
      const answer = await call.answer;
      this.#lastProgress = performance.now();
      reply({ requestId, ...this.#wholeAnswer(answer) });
    } catch (err) {
      if (!call.aborted) reply({ requestId, error: asProto(this.#failure(err)) });
    } finally {
      this.#inFlight.delete(requestId);
      this.#share.release(account);
    }
  }

  /**
   * Waits for the account's turn at an engine connection (FairShare); a `cancel` meanwhile ends the
   * wait. True once a connection is taken (release it); false when cancelled or closing, with
   * nothing taken and nothing to answer (a cancelled request gets no answer).
   */
  async #waitTurn(requestId: number, account: number): Promise<boolean> {
    const wait = this.#share.wait(account);
    this.#inFlight.set(requestId, { abort: wait.cancel });
    const taken = await wait.turn;
    this.#inFlight.delete(requestId);
    return taken;
  }

  /** A whole answer as the `predict` (or `error`) a model service would send. */
  #wholeAnswer({ statusCode, headers, text }: WholeAnswer): Pick<ServiceToGateProto, 'predict' | 'error'> {
    if (statusCode >= 300) return { error: this.#dialect.error(statusCode, text, headers) };
    if (!isJsonObjectText(text)) throw this.#bad(`the answer is not a JSON object: ${text.slice(0, 80) || '(empty)'}`);
    return { predict: { data: { json: text }, headers: relayedHeaders(headers) } };
  }

  /** A request that asked for a stream: the engine's events relayed as `partialPredict` frames as they come. */
  async #predictStreamed(
    requestId: number,
    request: { path: string; method: 'POST'; headers: Record<string, string>; body: string },
    body: Json,
    dialect: Dialect,
    reply: LocalReply,
  ): Promise<void> {
    const controller = new AbortController();
    this.#inFlight.set(requestId, controller);
    this.#lastProgress = performance.now();
    let answered = false;
    let first = true;
    try {
      const res = await this.#pool.request({ ...request, signal: controller.signal });
      if (res.statusCode >= 300 || !String(res.headers['content-type'] ?? '').includes('text/event-stream')) {
        const answer = this.#wholeAnswer({
          statusCode: res.statusCode,
          headers: res.headers,
          text: await readBoundedText(res.body, this.#maxAnswerBytes),
        });
        answered = true;
        reply({ requestId, ...answer });
        return;
      }
      const headers = relayedHeaders(res.headers);
      for await (const event of readSse(res.body, this.#maxAnswerBytes)) {
        this.#lastProgress = performance.now();
        const step = dialect.event(event);
        if (step.kind === 'bad') throw this.#bad(step.reason);
        if (step.kind === 'error') {
          answered = true;
          reply({ requestId, error: step.error });
          controller.abort();
          return;
        }
        if (step.kind === 'end') {
          answered = true;
          reply({ requestId, partialPredict: { finish: true } });
          return;
        }
        reply({ requestId, partialPredict: { data: { json: step.json }, start: first, finish: step.last, ...(first ? { headers } : {}) } });
        first = false;
        if (step.last) {
          answered = true;
          return;
        }
      }
      // An engine stream that ends without its end marker was cut off: the caller must not take it
      // for a complete answer.
      throw gatewayError('STREAM_CUT_OFF', { args: { service: this.#service.name, expected: dialect.streamEnd } });
    } catch (err) {
      if (controller.signal.aborted) return;
      this.#retirePool();
      if (answered) return;
      const counts: WholeAnswerCall[] = [];
      const failure = first ? await this.#streamFailure(err, body, requestId, counts) : this.#failure(err);
      // A cancel while the prompt was counted: the caller has gone.
      if (!counts.some((call) => call.aborted)) reply({ requestId, error: asProto(failure) });
    } finally {
      this.#inFlight.delete(requestId);
    }
  }

  /**
   * `count_tokens`: the Messages request (the ext param `request`) counted by the engine, its model
   * mapped as a predict's is; the engine's `{"input_tokens": N}` is the answer, never an estimate.
   */
  async #countTokens(requestId: number, json: string | undefined, callerHeaders: StringMap | undefined, reply: LocalReply): Promise<void> {
    let call: WholeAnswerCall | undefined;
    const account = callerAccount(callerHeaders);
    if (!this.#share.tryTake(account) && !(await this.#waitTurn(requestId, account))) return;
    try {
      const request = parseRequest(json);
      const model = engineModel(ourModel(request.model, true), this.#upstream, this.#service);
      const body = model === undefined ? request : { ...request, model };
      call = requestWholeAnswer(
        this.#pool,
        {
          path: this.#basePath + this.#dialect.countTokensPath!,
          method: 'POST',
          headers: this.#requestHeaders(callerHeaders, false),
          body: JSON.stringify(body),
        },
        this.#maxAnswerBytes,
      );
      this.#inFlight.set(requestId, call);
      const { statusCode, headers, text } = await call.answer;
      if (statusCode >= 300) reply({ requestId, error: this.#dialect.error(statusCode, text, headers) });
      else if (!isJsonObjectText(text)) throw this.#bad(`the token count is not a JSON object: ${text.slice(0, 80) || '(empty)'}`);
      else reply({ requestId, ext: { data: { json: text } } });
    } catch (err) {
      if (!call?.aborted) reply({ requestId, error: asProto(this.#failure(err)) });
    } finally {
      this.#inFlight.delete(requestId);
      this.#share.release(account);
    }
  }

  /** `count_tokens` by the engine's tokenizer (tokenize.ts): the chat request, then its text. */
  async #tokenize(requestId: number, json: string | undefined, reply: LocalReply): Promise<void> {
    const calls: WholeAnswerCall[] = [];
    try {
      const request = parseRequest(json);
      const model = engineModel(ourModel(request.model, true), this.#upstream, this.#service);
      const { count, status } = await this.#promptTokens(model === undefined ? request : { ...request, model }, requestId, calls);
      if (count !== undefined) return reply({ requestId, ext: { data: { json: JSON.stringify({ input_tokens: count }) } } });
      reply({
        requestId,
        error: {
          code: 'platform-action.common.method-not-supported',
          message: `the engine has no usable ${TOKENIZE_PATHS} (it answered ${status})`,
          statusCode: 501,
        },
      });
    } catch (err) {
      if (!calls.at(-1)?.aborted) reply({ requestId, error: asProto(this.#failure(err)) });
    } finally {
      this.#inFlight.delete(requestId);
    }
  }

  /**
   * A chat request's prompt tokens, counted by the engine (tokenize.ts): each way an engine may take
   * it in turn, a path the engine does not have (404, 405, 501) skipped. `count` is undefined when
   * none answered one; `status` is the last answer's. Each call is cancellable as `requestId`.
   */
  async #promptTokens(request: Json, requestId: number, calls: WholeAnswerCall[]): Promise<{ count?: number; status: number }> {
    let status = 0;
    let missing: string | undefined;
    for (const { path, body } of tokenizeRequests(request)) {
      if (path === missing) continue;
      const call = requestWholeAnswer(
        this.#pool,
        { path: rootPath(this.#basePath) + path, method: 'POST', headers: this.#headers, body: JSON.stringify(body) },
        this.#maxAnswerBytes,
      );
      calls.push(call);
      this.#inFlight.set(requestId, call);
      const answer = await call.answer;
      status = answer.statusCode;
      if (status === 404 || status === 405 || status === 501) missing = path;
      const count = status < 300 ? tokenCount(parseJsonOrUndefined(answer.text)) : undefined;
      if (count !== undefined) return { count, status };
    }
    return { status };
  }

  /**
   * Why a streamed chat request failed before its first event, when the service declares its
   * engine's window (`upstream.contextTokens`) and the engine counts the prompt at or over it:
   * llama.cpp's Python server answers such a stream 200 and then breaks it, where a whole request
   * gets its 400 `context_length_exceeded`. Otherwise (or when the count fails) the failure itself.
   */
  async #streamFailure(err: unknown, body: Json, requestId: number, calls: WholeAnswerCall[]): Promise<GatewayError> {
    const failure = this.#failure(err);
    const limit = this.#upstream.contextTokens;
    // Only a stream the engine broke: not one it never answered (a timeout, no connection).
    const broken = failure.code === 'STREAM_CUT_OFF' || failure.code === 'SERVICE_BAD_RESPONSE';
    if (limit === undefined || !broken || this.#upstream.api !== 'openai' || !Array.isArray(body.messages)) return failure;
    const { count } = await this.#promptTokens(body, requestId, calls).catch(() => ({ count: undefined }));
    if (count === undefined || count < limit) return failure;
    return gatewayError('CONTEXT_LENGTH_EXCEEDED', { param: 'messages', args: { service: this.#service.name, tokens: count, limit } });
  }

  #bad(reason: string): GatewayError {
    return gatewayError('SERVICE_BAD_RESPONSE', { args: { service: this.#service.name, reason } });
  }

  /** A transport failure as a catalog error; errors thrown here already are one. */
  #failure(err: unknown): GatewayError {
    const code = (err as { code?: string }).code;
    // The service's name only: the engine's URL (and any credentials in it) is the operator's, never a caller's.
    const args = { service: this.#service.name };
    const undiciErrors = loadUndici().errors;
    if (err instanceof undiciErrors.ConnectTimeoutError) {
      return gatewayError('UPSTREAM_UNREACHABLE', {
        args: { ...args, reason: `no connection within ${this.#upstream.connectTimeoutMs} ms` },
      });
    }
    if (err instanceof undiciErrors.HeadersTimeoutError) {
      return gatewayError('UPSTREAM_TIMEOUT', {
        args: { ...args, reason: `sent no response within ${this.#upstream.firstByteTimeoutMs} ms` },
      });
    }
    if (err instanceof undiciErrors.BodyTimeoutError) {
      return gatewayError('UPSTREAM_TIMEOUT', {
        args: { ...args, reason: `went silent for ${this.#upstream.idleTimeoutMs} ms in the middle of its answer` },
      });
    }
    if (err instanceof AnswerTooLarge) {
      return gatewayError('SERVICE_ANSWER_TOO_LARGE', { args: { service: this.#service.name, limit: err.limit } });
    }
    if (err instanceof undiciErrors.SocketError) {
      return this.#bad(`the connection closed in the middle of the answer (${err.message})`);
    }
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'EAI_AGAIN') {
      return gatewayError('UPSTREAM_UNREACHABLE', { args: { ...args, reason: code } });
    }
    return toGatewayError(err);
  }
}

/** The request of a `count_tokens` call: the Messages body as JSON text. */
function parseRequest(json: string | undefined): Json {
  const value = json ? parseJson(json, 'request') : undefined;
  if (!isObject(value))
    throw gatewayError('VALIDATION_FAILED', {
      param: 'request',
      args: { reason: 'count_tokens expects the Messages request as a JSON object in the param "request"' },
    });
  return value;
}

const CALLER_ACCOUNT_HEADER = GateHeaders.callerAccountId.toLowerCase();

/** The caller's account (the gateway's own header); -1, one shared account, when it is not known. */
function callerAccount(headers: StringMap | undefined): number {
  const id = Number(headerOf(headers, CALLER_ACCOUNT_HEADER));
  return Number.isInteger(id) ? id : -1;
}

/** A request header the gateway passed, by name in any case. */
function headerOf(headers: StringMap | undefined, name: string): string | undefined {
  for (const key in headers) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}

/** A catalog error as the `error` answer a model service would send (code, status and args kept). */
function asProto(err: GatewayError): ApiErrorProto {
  return {
    code: err.code,
    message: err.expose ? err.message : 'Internal gateway error',
    statusCode: err.status,
    args: err.permanent ? { ...err.args, retryable: 'false' } : err.args,
  };
}

function relayedHeaders(headers: IncomingHttpHeaders): StringMap | undefined {
  let out: StringMap | undefined;
  for (const name in headers) {
    if (!isRelayedUpstreamHeader(name)) continue;
    const value = headers[name];
    if (value !== undefined) (out ??= {})[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isJsonObjectText(text: string): boolean {
  if (!text.trimStart().startsWith('{')) return false;
  try {
    return typeof JSON.parse(text) === 'object';
  } catch {
    return false;
  }
}
