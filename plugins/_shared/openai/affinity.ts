import type { ServiceEntry } from '../../../core/plugins/index.js';

/**
 * The prefix-affinity key of a chat request: its first `affinity.messages` messages as JSON, for a
 * service configured with `affinity` (docs/routing.md); undefined otherwise. The Gate hashes it.
 */
export function affinityKey(service: ServiceEntry, messages: unknown): string | undefined {
  if (!service.affinity || !Array.isArray(messages) || messages.length === 0) return undefined;
  return JSON.stringify(messages.slice(0, service.affinity.messages));
}
