import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import type { Context } from 'koa';
import { GatewayError, errorHeaders, errorTypeForStatus, gatewayError, renderErrorBody, toGatewayError } from '../errors.js';
import type { Logger } from '../observe/logger.js';
import { GatewayEvents } from '../observe/events.js';
import { RequestRecord } from '../observe/request-record.js';
import { isLimitRejection } from '../observe/rejections.js';
import { isExpectedCondition } from '../observe/expected-conditions.js';
import { isDraining } from './body-drain.js';
import type { ErrorRenderer } from './state.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export type { ErrorRenderer };

/**
 * Makes the error middleware render this request's errors with `render` instead of the envelope of
 * docs/design.md (decisions): status and headers stay the middleware's; only the body's shape changes.
 */
export function useErrorRenderer(ctx: Context, render: ErrorRenderer): void {
  ctx.state.errorRenderer = render;
}

/**
 * The Koa app with the cross-cutting middleware every route gets: a request ID (taken from
 * `x-request-id` when the caller sends a sane one) on every response, the access log line and the
 * `httpRequest` event, and the one error middleware that renders every thrown error in the envelope
 * of docs/design.md (or the shape a route chose with useErrorRenderer).
 */
export function createHttpApp(log: Logger, events: GatewayEvents = new GatewayEvents(), accessLogOn = true): Koa {
  const app = new Koa();
  app.proxy = false;
  // Errors are rendered by the middleware below; Koa's default handler would log them again.
  app.silent = true;
  const accessLog = accessLogOn && log.isLevelEnabled('info');

  app.use(async function requestContext(ctx, next) {
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    const record = new RequestRecord();
    ctx.state.record = record;
    const started = performance.now();
    const socket = ctx.req.socket;
    const writtenBefore = socket.bytesWritten;
    let errorCode: string | undefined;
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw gatewayError('NOT_FOUND', { args: { method: ctx.method, path: ctx.path } });
    } catch (thrown) {
      const err = fromKoaError(thrown, ctx.method, ctx.path) ?? toGatewayError(thrown);
      if (err.status >= 500) {
        if (isExpectedCondition(err)) log.warn({ requestId, code: err.code, status: err.status }, `request failed: ${err.message}`);
        else log.error({ requestId, err: err.cause ?? err, code: err.code }, 'request failed');
      }
      errorCode = err.code;
      if (isLimitRejection(err)) events.emit('rejection', { code: err.code });
      ctx.status = err.status;
      ctx.set('x-request-id', requestId);
      ctx.set(errorHeaders(err));
      // An error answered before the request body was read to its end (413 mid-body, 401 before the
      // body): the rest of the body would stay in the socket and poison the next request on it (or
      // Node would read it all to discard it). Closing the connection bounds both, unless the body
      // reader drains the rest of a refused body, which closes the connection itself past its bound.
      if (!ctx.req.complete && !isDraining(ctx.req)) ctx.set('Connection', 'close');
      const render = ctx.state.errorRenderer;
      ctx.body = render ? render(err, requestId) : renderErrorBody(err);
    } finally {
      if (accessLog || events.has('httpRequest')) {
        const event = requestEvent(ctx, record, requestId, performance.now() - started, socket.bytesWritten - writtenBefore, errorCode);
        events.emit('httpRequest', event);
        if (accessLog) log.info(accessLine(event), 'request');
      }
    }
  });
  return app;
}

function requestEvent(
  ctx: Koa.Context,
  record: RequestRecord,
  requestId: string,
  durationMs: number,
  written: number,
  errorCode: string | undefined,
) {
  // A body Koa has yet to send has a known length; a response the handler streamed itself was
  // written to the socket already (HTTP/1.1 serves one request at a time per connection).
  const length = ctx.response.length;
  const matched = (ctx as { _matchedRoute?: string })._matchedRoute;
  return {
    requestId,
    method: ctx.method,
    route: matched ?? 'unmatched',
    plugin: matched === undefined ? 'none' : (ctx.state.plugin ?? 'none'),
    status: ctx.status,
    durationMs,
    serviceWaitMs: record.serviceWaitMs,
    service: record.service && `${record.service.account.name}/${record.service.name}`,
    model: record.model,
    account: record.caller?.account.name,
    keyName: record.caller?.keyName,
    keyId: record.caller?.keyId,
    bytesIn: record.bytesIn || Number(ctx.get('content-length')) || 0,
    bytesOut: typeof length === 'number' ? length : written,
    inputTokens: record.inputTokens,
    outputTokens: record.outputTokens,
    errorCode,
  };
}

/** The access-log line: names and numbers only; never a key, a header or a body. */
function accessLine(e: ReturnType<typeof requestEvent>): Record<string, unknown> {
  return {
    requestId: e.requestId,
    method: e.method,
    plugin: e.plugin,
    route: e.route,
    status: e.status,
    ms: Math.round(e.durationMs * 10) / 10,
    account: e.account,
    key: e.keyName,
    service: e.service,
    model: e.model,
    bytesIn: e.bytesIn,
    bytesOut: e.bytesOut,
    inputTokens: e.inputTokens,
    outputTokens: e.outputTokens,
    code: e.errorCode,
  };
}

/**
 * Errors raised by Koa or the router themselves (http-errors) keep their status, except the router's
 * 501 for a method it knows nothing of (TRACE, …): that is the caller's request, not a gateway fault,
 * so it is the 405 of any other method the path is not served for.
 */
function fromKoaError(thrown: unknown, method: string, path: string): GatewayError | undefined {
  if (thrown instanceof GatewayError) return undefined;
  const e = thrown as { status?: unknown; expose?: boolean; message?: string };
  if (typeof e?.status !== 'number' || e.status < 400 || e.status > 599) return undefined;
  if (e.status === 405) return gatewayError('METHOD_NOT_ALLOWED', { message: e.message });
  if (e.status === 501) return gatewayError('METHOD_NOT_ALLOWED', { args: { method, path } });
  return new GatewayError({
    code: `HTTP_${e.status}`,
    status: e.status,
    type: errorTypeForStatus(e.status),
    message: e.message ?? 'Error',
    expose: e.expose ?? e.status < 500,
  });
}
