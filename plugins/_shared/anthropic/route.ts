/**
 * What every Messages API route (`/v1/messages`, `/v1/messages/count_tokens`) of either adapter does
 * before its own work: errors in Anthropic's shape, a `request-id` header (the SDKs expose it as
 * `_request_id` / `requestID`), and the `anthropic-version` / `anthropic-beta` headers the caller
 * sent, to be passed on to the service.
 */
import type { Context, Next } from 'koa';
import { useErrorRenderer } from '../../../core/plugins/index.js';
import { renderAnthropicError } from './errors.js';

/** Caller headers passed to the service on these routes. */
const PASSED = ['anthropic-version', 'anthropic-beta'] as const;

/** Router middleware ahead of admission: the route's errors, admission's 401 and 429 included, are in Anthropic's shape. */
export async function anthropicRoute(koa: Context, next: Next): Promise<void> {
  useErrorRenderer(koa, renderAnthropicError);
  koa.set('request-id', String(koa.state.requestId));
  await next();
}

/** The `anthropic-*` headers the caller sent, for the service. */
export function passedHeaders(koa: Context): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of PASSED) {
    const value = koa.get(name);
    if (value && value.length <= 1000) headers[name] = value;
  }
  return headers;
}
