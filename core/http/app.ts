import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { GatewayError, errorTypeForStatus, gatewayError, renderErrorBody, toGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The Koa app with the cross-cutting middleware every route gets: a request ID (taken from
 * `x-request-id` when the caller sends a sane one) on every response, an access log line, and the one
 * error middleware that renders every thrown error in the envelope of DESIGN.md section 4.
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
      if (err.permanent) ctx.set('x-should-retry', 'false');
      ctx.body = renderErrorBody(err);
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
