/**
 * CORS for the chat adapters, so browser apps can call them (off unless origins are configured). A
 * request from an allowed origin gets `Access-Control-Allow-Origin` (that origin, or `*` when any is
 * allowed) on every answer, errors and streams included, and the headers SDKs read exposed; a
 * preflight (`OPTIONS` with `Access-Control-Request-Method`) gets 204 with the allowed methods and
 * the requested headers. Credentials (cookies) are never allowed: the adapters take keys in headers.
 */
import type Router from '@koa/router';
import type { Context, Next } from 'koa';

export interface CorsOptions {
  /** Exact origins (`https://app.example.com`), or `*` for any. Empty: CORS off. */
  allowedOrigins: string[];
  /** How long a browser may cache a preflight answer. */
  maxAgeSec: number;
}

export const CORS_OPTIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    allowedOrigins: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
    maxAgeSec: { type: 'integer', minimum: 0, default: 600 },
  },
};

/** Response headers browser code may read: request ids and the retry and rate-limit headers. */
const EXPOSED = [
  'x-request-id',
  'request-id',
  'x-upstream-request-id',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
  'x-ratelimit-limit-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-requests',
  'x-ratelimit-reset-tokens',
  // What the gateway says about a translation: hosted tools left out, an estimated token count.
  'x-gateway-dropped-tools',
  'x-gateway-token-count',
].join(', ');

const METHODS = 'GET, POST, DELETE, OPTIONS';
/** A requested header list is echoed back only when it is a plain list of header names. */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

/** Mounts CORS on every route of `router` under `base`; does nothing when no origin is allowed. */
export function mountCors(router: Router, base: string, options: CorsOptions | undefined): void {
  if (!options || options.allowedOrigins.length === 0) return;
  const any = options.allowedOrigins.includes('*');
  const allowed = new Set(options.allowedOrigins);
  const allowOrigin = (koa: Context): string | undefined => {
    const origin = koa.get('origin');
    if (!origin) return undefined;
    if (any) return '*';
    return allowed.has(origin) ? origin : undefined;
  };

  router.use(base, async (koa: Context, next: Next) => {
    const origin = allowOrigin(koa);
    if (origin) {
      koa.set('access-control-allow-origin', origin);
      koa.set('access-control-expose-headers', EXPOSED);
    }
    if (!any) koa.vary('origin');
    await next();
  });

  router.options(`${base}/*path`, (koa: Context) => {
    const origin = allowOrigin(koa);
    koa.status = 204;
    if (!origin || !koa.get('access-control-request-method')) return;
    koa.set('access-control-allow-methods', METHODS);
    const requested = koa.get('access-control-request-headers');
    koa.set(
      'access-control-allow-headers',
      HEADER_LIST.test(requested) ? requested : 'authorization, content-type, x-api-key, anthropic-version, anthropic-beta',
    );
    koa.set('access-control-max-age', String(options.maxAgeSec));
  });
}
