/**
 * What the two OpenAI-compatible audio bridges share: where they live, how the caller's key is read
 * and how `model` names a service. Same rules as the chat adapters (reference/openai-wire.md).
 */
import type { Context } from 'koa';
import { gatewayError, type Caller, type PluginContext, type ServiceEntry } from '../../../core/plugins/index.js';

/** The chat adapter's base: the audio routes sit beside chat/completions. */
export const OPENAI_BASE = '/api/adapters/chatapi';

/** `<base>/<path>` and `<base>/v1/<path>`. */
export const openAiRoute = (path: string): string => `${OPENAI_BASE}{/v1}/${path}`;

/** Named in the 401 message when no key came. */
export const KEY_HEADER = 'Authorization';

const BEARER = /^bearer\s+/i;

/**
 * The API key from `Authorization: Bearer <key>` (scheme in any case), a raw `Authorization: <key>`,
 * `x-api-key` or `PLATFORM-API-KEY`; empty when none came.
 */
export function openAiApiKey(koa: Context): string {
  const headers = koa.request.headers;
  const authorization = headers.authorization;
  if (authorization) return authorization.replace(BEARER, '').trim();
  for (const name of ['x-api-key', 'platform-api-key']) {
    const value = headers[name];
    if (typeof value === 'string' && value) return value.trim();
  }
  return '';
}

/** Authenticates the caller (401/402/403) and counts the request against its rate (429). */
export function admitCaller(ctx: PluginContext<any>, koa: Context): Caller {
  const caller = ctx.pipeline.authenticate(openAiApiKey(koa), KEY_HEADER, 'MODEL_REQUESTS');
  ctx.pipeline.countRequest(caller);
  return caller;
}

/**
 * The service `model` names, as `<author>/<service>` (account and service by name or ID). Anything
 * that names no service is 404 MODEL_NOT_FOUND, OpenAI's status for an unknown model; another
 * account's private service is 403.
 */
export function resolveModel(ctx: PluginContext<any>, caller: Caller, model: string): ServiceEntry {
  const slash = model.indexOf('/');
  const author = slash > 0 ? model.slice(0, slash) : '';
  const name = slash > 0 ? model.slice(slash + 1) : '';
  const account = author && name ? ctx.directory.findAccount(author) : undefined;
  const service = account ? ctx.directory.findService(account, name) : undefined;
  if (!service) throw gatewayError('MODEL_NOT_FOUND', { param: 'model', args: { model } });
  ctx.pipeline.checkAccess(caller, service);
  return service;
}
