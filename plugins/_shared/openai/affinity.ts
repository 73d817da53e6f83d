import type { Context } from 'koa';
import type { ServiceEntry } from '../../../core/plugins/index.js';
import { isJsonObject } from './json-object.js';

/** Headers with which agents name their session: Claude Code, Codex CLI, and the gateway's own. */
const SESSION_HEADERS = ['x-session-affinity', 'x-claude-code-session-id', 'session_id', 'session-id', 'conversation_id'] as const;
const MAX_SESSION = 200;

/**
 * The prefix-affinity key of a chat request, for a service configured with `affinity`
 * (docs/routing.md); undefined otherwise. The Gate hashes it. An agent's session id, when the request
 * carries one (`sessionKey`), keeps a whole session on one instance, so its engine's prefix cache
 * stays warm; else the first `affinity.messages` messages as JSON.
 */
export function affinityKey(service: ServiceEntry, messages: unknown, session?: string): string | undefined {
  if (!service.affinity) return undefined;
  if (session) return `session:${session}`;
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  return JSON.stringify(messages.slice(0, service.affinity.messages));
}

/**
 * The session an agent's request names, first found of: the headers `x-session-affinity`,
 * `x-claude-code-session-id` (Claude Code), `session_id`/`session-id`/`conversation_id` (Codex CLI);
 * the body's `prompt_cache_key` (Codex, Responses); `metadata.user_id` (Claude Code puts a JSON object
 * with `session_id` there; any other string is taken whole).
 */
export function sessionKey(koa: Context, body: Record<string, unknown>): string | undefined {
  for (const name of SESSION_HEADERS) {
    const value = koa.get(name);
    if (value) return value.slice(0, MAX_SESSION);
  }
  if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key) return body.prompt_cache_key.slice(0, MAX_SESSION);
  const user = isJsonObject(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof user !== 'string' || !user) return undefined;
  if (user.startsWith('{')) {
    try {
      const parsed = JSON.parse(user) as unknown;
      if (isJsonObject(parsed) && typeof parsed.session_id === 'string' && parsed.session_id)
        return parsed.session_id.slice(0, MAX_SESSION);
    } catch {
      // Not JSON after all: the string itself.
    }
  }
  return user.slice(0, MAX_SESSION);
}
