import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { Caller } from '../directory.js';
import { gatewayError } from '../errors.js';
import { GateHeaders, type StringMap } from '../../proto/src/index.js';
import type { ServiceCall } from '../gate/service-call.js';

/** Request-body and header helpers every HTTP plugin uses, bound to the configured body limit. */
export interface HttpHelpers {
  /** The body exactly as sent, up to `limit` bytes (413 REQUEST_TOO_LARGE beyond). */
  readRawBody(ctx: Context, limit?: number): Promise<Buffer>;
  /** The body parsed as JSON (400 MALFORMED_JSON when it is not). */
  readJson(ctx: Context, limit?: number): Promise<unknown>;
  /** The body parsed as JSON together with its text, for plugins that pass parts of it on as they came. */
  readJsonText(ctx: Context, limit?: number): Promise<{ text: string; value: unknown }>;
  /** Headers to pass to a service for this request (request ID, caller, billing). */
  serviceHeaders(ctx: Context, caller: Caller): StringMap;
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
}

const CALL = Symbol('service call');
type ResponseWithCall = ServerResponse & { [CALL]?: ServiceCall };

/** `close` listener shared by every response: a close before the end cancels the response's call. */
function onResponseClose(this: ResponseWithCall): void {
  if (!this.writableFinished) this[CALL]?.cancel(gatewayError('REQUEST_CANCELED'));
}

/** Headers a caller may send that services read (reference/service-protocol.md section 3). */
const PASSED_HEADERS = [
  GateHeaders.billingKey, GateHeaders.contentHidden, GateHeaders.billingKeyName, GateHeaders.billingAccountId, GateHeaders.billingUserId,
];

export function createHttpHelpers(bodyLimitBytes: number): HttpHelpers {
  const readRawBody = async (ctx: Context, limit = bodyLimitBytes): Promise<Buffer> => {
    try {
      return await getRawBody(ctx.req, { limit, length: ctx.request.headers['content-length'] });
    } catch (err) {
      const e = err as { type?: string; limit?: number; message?: string };
      if (e.type === 'entity.too.large') throw gatewayError('REQUEST_TOO_LARGE', { args: { limit } });
      throw gatewayError('VALIDATION_FAILED', { args: { reason: `request body could not be read: ${e.message ?? 'aborted'}` } });
    }
  };
  const readJsonText = async (ctx: Context, limit?: number): Promise<{ text: string; value: unknown }> => {
    const raw = await readRawBody(ctx, limit);
    if (raw.length === 0) throw gatewayError('MALFORMED_JSON', { args: { reason: 'the body is empty' } });
    const text = raw.toString('utf8');
    try {
      return { text, value: JSON.parse(text) as unknown };
    } catch (err) {
      throw gatewayError('MALFORMED_JSON', { args: { reason: (err as Error).message } });
    }
  };
  return {
    readRawBody,
    readJsonText,
    async readJson(ctx, limit) {
      return (await readJsonText(ctx, limit)).value;
    },
    serviceHeaders(ctx, caller) {
      const headers: StringMap = {
        [GateHeaders.requestId]: String(ctx.state.requestId),
        [GateHeaders.callerAccountId]: String(caller.account.id),
        [GateHeaders.apiKeyName]: caller.keyName,
      };
      for (const name of PASSED_HEADERS) {
        const value = ctx.get(name);
        if (value) headers[name.toUpperCase()] = value;
      }
      return headers;
    },
    closeSignal(ctx) {
      // The response's close, not the request's: IncomingMessage emits 'close' once its body is read.
      const controller = new AbortController();
      const res = ctx.res;
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
