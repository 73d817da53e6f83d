import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Caller, ServiceEntry } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import { serviceLabel } from '../gate/service-label.js';
import { GatewayEvents } from '../observe/events.js';
import { passTraceContext } from '../observe/trace-context.js';
import type { StringMap } from '../../proto/src/index.js';
import { callContext, type CallContext } from '../gate/call-context.js';
import type { ServiceCall } from '../gate/service-call.js';
import { httpCallerHeaders, serviceHeaders } from '../gate/service-headers.js';
import { costOf, modelOfRequest, type RegistryPrices } from '../userspace/prices.js';
import { DEFAULT_JSON_MAX_DEPTH, DEFAULT_JSON_SIZE_LIMITS, JsonShapeCheck, parseJson, type JsonSizeLimits } from '../validation/json.js';
import type { AccountInputRate } from '../flow/byte-rate.js';
import { readBodyInspected, type BodyReadOptions } from './read-body.js';

/** Request-body and header helpers every HTTP plugin uses, bound to the configured body limit. */
export interface HttpHelpers {
  /** The body exactly as sent, up to `limit` bytes (413 REQUEST_TOO_LARGE beyond). */
  readRawBody(ctx: Context, limit?: number): Promise<Buffer>;
  /**
   * The body parsed as JSON (400 MALFORMED_JSON when it is not; see core/validation/json.ts for the
   * other refusals); `maxMembers` narrows `limits.jsonMaxMembers` for a body whose shape bounds it.
   */
  readJson(ctx: Context, limit?: number, maxMembers?: number): Promise<unknown>;
  /** The body parsed as JSON together with its text, for plugins that pass parts of it on as they came. */
  readJsonText(ctx: Context, limit?: number, maxMembers?: number): Promise<{ text: string; value: unknown }>;
  /**
   * JSON text parsed with the gateway's rules (core/validation/json.ts); `part` (data, config, body)
   * is named in the 400; leave it out for a whole body read as JSON.
   */
  parseJson(text: string, part?: string): unknown;
  /** Headers to pass to a service for this request (request ID, caller, billing, the caller's trace context). */
  serviceHeaders(ctx: Context, caller: Caller): StringMap;
  /**
   * The call context of this request, to pass to `gate.open` as `context`: its service headers (a
   * fresh object, the plugin's to extend or copy), the caller, and the request's record and trace,
   * which the Gate fills in (the service's wait, the call's span) whatever headers the plugin sends.
   */
  callContext(ctx: Context, caller: Caller, service?: ServiceEntry): CallContext;
  /**
   * A signal that aborts when the caller goes away before the response is finished; pass it to
   * `gate.open` so the service gets `cancel` and the call's slot is freed.
   */
  closeSignal(ctx: Context): AbortSignal;
  /**
   * Cancels `call` (the service gets `cancel`, the call's slot is freed) when the caller goes away
   * before the response is finished. What passing closeSignal() to `gate.open` does, without an
   * AbortController per request: the hot paths (chat adapters, sync predict) use this.
   */
  cancelOnClose(ctx: Context, call: ServiceCall): void;
  /**
   * Reports the tokens of the answer to this request (from the answer's `usage`): they go to the
   * access log (with the model the caller asked for), the metrics and the account's usage. Call it
   * after the service was called.
   */
  reportTokens(ctx: Context, tokens: { inputTokens: number; outputTokens: number }, model?: string): void;
  /**
   * The service this request is for when it calls none now (an async task, stored for a worker to
   * send later): the access log, metrics and usage count the request for that service and caller, as
   * they count a request whose call the Gate opened.
   */
  reportService(ctx: Context, caller: Caller, service: ServiceEntry): void;
}

const CALL = Symbol('service call');
type ResponseWithCall = ServerResponse & { [CALL]?: ServiceCall };

/** `close` listener shared by every response: a close before the end cancels the response's call. */
function onResponseClose(this: ResponseWithCall): void {
  if (!this.writableFinished) this[CALL]?.cancel(gatewayError('REQUEST_CANCELED'));
}

/** How bodies are read besides their size: each account's input rate, and the drain of a refused body's rest. */
export interface BodyReading {
  /** `limits.inputBytesPerSecondPerAccount`, shared with the gRPC client calls; undefined: not paced. */
  accountInput?: AccountInputRate;
  /** `server.refusedBodyDrainBytes`: 0 leaves a refused body's rest unread (the connection is closed). */
  refusedBodyDrainBytes?: number;
}

/** The headers a service gets for this request: request ID, caller, billing, the caller's W3C trace context. */
function serviceHeadersOf(ctx: Context, caller: Caller): StringMap {
  const headers = serviceHeaders(
    { requestId: String(ctx.state.requestId), callerAccountId: caller.account.id, keyName: caller.keyName },
    httpCallerHeaders(ctx.request.headers),
  );
  passTraceContext((name) => ctx.get(name), headers);
  return headers;
}

export function createHttpHelpers(
  bodyLimitBytes: number,
  events: GatewayEvents = new GatewayEvents(),
  jsonMaxDepth = DEFAULT_JSON_MAX_DEPTH,
  jsonSize: JsonSizeLimits = DEFAULT_JSON_SIZE_LIMITS,
  registryPrices?: RegistryPrices,
  reading: BodyReading = {},
): HttpHelpers {
  // The body's bytes count against the input rate of the caller admission left on the context
  // (ctx.state.caller): a tenant's large bodies wait on its own budget (issue 25).
  // A refused body's rest is drained for an admitted caller only, at its rate: every byte it sends
  // then counts, so an attacker's refused 30 MB bodies hold it to its rate instead of sending it
  // straight on to the next (a body read before admission, 64 KiB at most, is closed on as before).
  const readOptions = (ctx: Context): BodyReadOptions => {
    const caller = ctx.state.caller;
    const { accountInput, refusedBodyDrainBytes = 0 } = reading;
    if (!caller || !accountInput) return {};
    return {
      pace: accountInput.chargeOf(caller.account.id),
      ...(refusedBodyDrainBytes > 0 ? { drain: { res: ctx.res, maxBytes: refusedBodyDrainBytes } } : {}),
    };
  };
  const readRawBody = async (ctx: Context, limit = bodyLimitBytes): Promise<Buffer> => {
    const body = await readBodyInspected(ctx.req, limit, () => undefined, readOptions(ctx));
    const record = ctx.state.record;
    if (record) record.bytesIn = body.length;
    return body;
  };
  const readJsonText = async (
    ctx: Context,
    limit = bodyLimitBytes,
    maxMembers = jsonSize.maxMembers,
  ): Promise<{ text: string; value: unknown }> => {
    // The configured bounds as they are unless the caller narrows them: no object per request.
    const size = maxMembers >= jsonSize.maxMembers ? jsonSize : { ...jsonSize, maxMembers };
    // The size bounds are checked as the bytes arrive: a body over one is refused from its first
    // kilobytes, never gathered whole (issue 25 N1).
    const shape = new JsonShapeCheck(jsonMaxDepth, size);
    const raw = await readBodyInspected(ctx.req, limit, (chunk) => shape.push(chunk), readOptions(ctx));
    const record = ctx.state.record;
    if (record) record.bytesIn = raw.length;
    if (raw.length === 0) throw gatewayError('MALFORMED_JSON', { args: { reason: 'the body is empty' } });
    const text = raw.toString('utf8');
    return { text, value: parseJson(text, undefined, jsonMaxDepth, size) };
  };
  return {
    readRawBody,
    readJsonText,
    parseJson: (text, part) => parseJson(text, part, jsonMaxDepth, jsonSize),
    async readJson(ctx, limit, maxMembers) {
      return (await readJsonText(ctx, limit, maxMembers)).value;
    },
    serviceHeaders(ctx, caller) {
      const record = ctx.state.record;
      if (record) record.caller = caller;
      return serviceHeadersOf(ctx, caller);
    },
    callContext(ctx, caller, service) {
      return callContext(caller, serviceHeadersOf(ctx, caller), ctx.state.record, service);
    },
    reportTokens(ctx, tokens, model) {
      const record = ctx.state.record;
      if (!record) return;
      if (model !== undefined) record.model = model;
      record.inputTokens = (record.inputTokens ?? 0) + tokens.inputTokens;
      record.outputTokens = (record.outputTokens ?? 0) + tokens.outputTokens;
      const { caller, service } = record;
      if (caller && service && events.has('usage')) {
        const cost = costOf(service, modelOfRequest(model ?? record.model), tokens, registryPrices);
        events.emit('usage', {
          at: Date.now(),
          accountId: caller.account.id,
          account: caller.account.name,
          serviceId: service.id,
          service: serviceLabel(service),
          inputTokens: tokens.inputTokens,
          outputTokens: tokens.outputTokens,
          keyId: caller.keyId,
          keyName: caller.keyName,
          model: model ?? record.model,
          cost: cost?.amount,
          currency: cost?.currency,
        });
      }
    },
    reportService(ctx, caller, service) {
      const record = ctx.state.record;
      if (!record) return;
      record.caller = caller;
      record.service = service;
    },
    closeSignal(ctx) {
      // The response's close, not the request's: IncomingMessage emits 'close' once its body is read.
      const controller = new AbortController();
      const res = ctx.res;
      // A caller already gone (its close came while the body was read) emits no further close.
      if (res.destroyed && !res.writableFinished) controller.abort();
      res.once('close', () => {
        if (!res.writableFinished) controller.abort();
      });
      return controller.signal;
    },
    cancelOnClose(ctx, call) {
      const res = ctx.res as ResponseWithCall;
      if (res.destroyed) {
        if (!res.writableFinished) call.cancel(gatewayError('REQUEST_CANCELED'));
        return;
      }
      res[CALL] = call;
      res.once('close', onResponseClose);
    },
  };
}
