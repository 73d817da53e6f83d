import type { Context } from 'koa';
import { PLATFORM_KEY_HEADER } from '../../../core/plugins/index.js';

const BEARER = /^bearer\s+/i;

/**
 * The API key of a chat-adapter request, from any header official clients use (openai-wire.md
 * section 5): `Authorization: Bearer <key>` (scheme in any case), a raw `Authorization: <key>`,
 * `x-api-key` (Anthropic SDK) or `PLATFORM-API-KEY` (the platform's own header). Empty when none.
 */
export function chatApiKey(koa: Context): string {
  const headers = koa.request.headers;
  const authorization = headers.authorization;
  if (authorization) return BEARER.test(authorization) ? authorization.replace(BEARER, '').trim() : authorization.trim();
  const xApiKey = headers['x-api-key'];
  if (typeof xApiKey === 'string' && xApiKey) return xApiKey.trim();
  return koa.get(PLATFORM_KEY_HEADER).trim();
}

/** Named in the 401 message when no key came. */
export const CHAT_KEY_HEADER = 'Authorization';
