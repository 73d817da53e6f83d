/**
 * Which instance of a service takes a request: the least loaded one that has the requested model
 * loaded, by the load the instances report (docs/routing.md); the Gate's own count of calls in
 * flight where they report none; and, for a service with prefix affinity, the instance the
 * conversation's prefix hashes to while it is not clearly busier than the best. Pure functions.
 */
import type { GateInstance } from './instance.js';

/** How much busier than the least loaded instance an affine instance may be and still get the request. */
export const AFFINITY_SLACK = 2;

/** An instance's load: requests working and waiting, plus its KV-cache use (0 to 1) as a tiebreaker. */
export function loadScore(instance: GateInstance): number {
  const load = instance.load;
  if (!load) return instance.inFlight;
  return Math.max(instance.inFlight, load.inFlight ?? 0) + (load.queueDepth ?? 0) + (load.kvCacheUsage ?? 0);
}

/** The instances that report `model` loaded, when any does; else all of them. */
export function withModel(instances: readonly GateInstance[], model: string | undefined): readonly GateInstance[] {
  if (model === undefined || !instances.some((i) => i.load?.models?.includes(model))) return instances;
  return instances.filter((i) => i.load?.models?.includes(model));
}

/**
 * The least loaded instance; ties go round-robin from `offset` so idle instances share the load.
 * With an affinity key, the instance the key hashes to (rendezvous hashing: stable while instances
 * come and go) unless it is more than AFFINITY_SLACK busier.
 */
export function pickInstance(instances: readonly GateInstance[], offset: number, affinityKey?: string): GateInstance | undefined {
  const n = instances.length;
  if (n <= 1) return instances[0];
  let best: GateInstance | undefined;
  let bestScore = Infinity;
  for (let i = 0; i < n; i++) {
    const candidate = instances[(offset + i) % n]!;
    const score = loadScore(candidate);
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  if (affinityKey === undefined) return best;
  const affine = rendezvous(instances, affinityKey);
  return loadScore(affine) <= bestScore + AFFINITY_SLACK ? affine : best;
}

function rendezvous(instances: readonly GateInstance[], key: string): GateInstance {
  let chosen = instances[0]!;
  let top = -1;
  for (const instance of instances) {
    const weight = fnv1a(`${key}\u0000${instance.bootUuid}`);
    if (weight > top) {
      top = weight;
      chosen = instance;
    }
  }
  return chosen;
}

/** 32-bit FNV-1a: a fast, well-spread hash for picking, not for security. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
