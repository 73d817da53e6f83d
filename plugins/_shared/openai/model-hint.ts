/**
 * The hint an unknown `model` gets: the `<account>/<service>` form the adapters take, and the model
 * ids closest to what was sent among those the caller may call (a key learns nothing about services
 * it may not call). Computed only on the error path.
 */
import type { Caller, PluginContext } from '../../../core/plugins/index.js';

/** Names compared at most: a hint is a courtesy, not a search engine. */
const MAX_CANDIDATES = 2000;
const MAX_NAME = 200;
const SHOWN = 3;

/** Every id the caller may send as `model`: `<account>/<service>` and each alias. */
export function callableIds(ctx: PluginContext<any>, caller: Caller): string[] {
  const ids: string[] = [];
  for (const service of ctx.directory.services()) {
    if (!ctx.pipeline.mayCall(caller, service)) continue;
    ids.push(`${service.account.name}/${service.name}`, ...(service.aliases ?? []));
    if (ids.length >= MAX_CANDIDATES) break;
  }
  return ids;
}

export function unknownModelHint(ctx: PluginContext<any>, caller: Caller, model: string): string {
  const wanted = model.slice(0, MAX_NAME).toLowerCase();
  const ranked = callableIds(ctx, caller)
    .map((id) => ({ id, score: closeness(wanted, id.toLowerCase()) }))
    .sort((a, b) => a.score - b.score)
    .slice(0, SHOWN)
    .map((c) => c.id);
  const closest = ranked.length ? `; closest: ${ranked.join(', ')}` : '';
  return `models are named <account>/<service>[/<model>] or by a service alias; GET /v1/models lists the ones this key may call${closest}`;
}

/**
 * Lower is closer: the edit distance to the id or to its service name, less the length of the prefix
 * they share (a family name such as `gpt-` or `claude-` says more than the letters after it).
 */
function closeness(wanted: string, id: string): number {
  const name = id.slice(id.lastIndexOf('/') + 1);
  let shared = 0;
  while (shared < wanted.length && shared < name.length && wanted[shared] === name[shared]) shared++;
  return Math.min(editDistance(wanted, id), editDistance(wanted, name)) - shared;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
