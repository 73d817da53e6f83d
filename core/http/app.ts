import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import type { Context } from 'koa';
import { GatewayError, errorHeaders, errorTypeForStatus, gatewayError, renderErrorBody, toGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Renders an error body in a route's own wire shape (e.g. Anthropic's on the Messages API routes). */
export type ErrorRenderer = (err: GatewayError, requestId: string) => unknown;

const RENDERER = Symbol('error renderer');

/**
 * Makes the error middleware render this request's errors with `render` instead of the envelope of
 * DESIGN.md section 4: status and headers stay the middleware's; only the body's shape changes.
 */
export function useErrorRenderer(ctx: Context, render: ErrorRenderer): void {
  (ctx.state as Record<symbol, ErrorRenderer>)[RENDERER] = render;
}

/**
 * The Koa app with the cross-cutting middleware every route gets: a request ID (taken from
 * `x-request-id` when the caller sends a sane one) on every response, an access log line, and the one
 * error middleware that renders every thrown error in the envelope of DESIGN.md section 4 (or the
 * shape a route chose with useErrorRenderer).
 */
export function createHttpApp(log: Logger): Koa {
  const app = new Koa();
  app.proxy = false;
  // Errors are rendered by the middleware below; Koa's default handler would log them again.
  app.silent = true;
  const debug = log.isLevelEnabled('debug');

  app.use(async function requestContext(ctx, next) {
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    const started = debug ? performance.now() : 0;
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw gatewayError('NOT_FOUND', { args: { method: ctx.method, path: ctx.path } });
    } catch (thrown) {
      const err = fromKoaError(thrown, ctx.method, ctx.path) ?? toGatewayError(thrown);
      if (err.status >= 500) log.error({ requestId, err: err.cause ?? err, code: err.code }, 'request failed');
      ctx.status = err.status;
      ctx.set('x-request-id', requestId);
      ctx.set(errorHeaders(err));
      // An error answered before the request body was read to its end (413 mid-body, 401 before the
      // body): the rest of the body would stay in the socket and poison the next request on it (or
      // Node would read it all to discard it). Closing the connection bounds both.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
      const render = (ctx.state as Record<symbol, ErrorRenderer | undefined>)[RENDERER];
      ctx.body = render ? render(err, requestId) : renderErrorBody(err);
    } finally {
      // Guarded: the access-log object is not built on the hot path unless debug logging is on.
      if (debug) log.debug({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) }, 'http');
    }
  });
  return app;
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
  return new GatewayError({ code: `HTTP_${e.status}`, status: e.status, type: errorTypeForStatus(e.status), message: e.message ?? 'Error', expose: e.expose ?? e.status < 500 });
}
