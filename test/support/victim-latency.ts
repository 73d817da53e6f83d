import { OTHER_ACCOUNT_KEY } from './gateway.js';
import { peakGrowth } from './memory-watch.js';

/** One small predict of the other account (`other`) to the public demo/echo over HTTP: its status and body. */
export async function otherAccountPredict(httpUrl: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${httpUrl}/api/platformgate/account/demo/model/echo/predict-with-config`, {
    method: 'POST',
    headers: { 'PLATFORM-API-KEY': OTHER_ACCOUNT_KEY, 'Content-Type': 'application/json' },
    body: '{"data":{"x":1}}',
  });
  return { status: res.status, text: await res.text() };
}

/** What `attack` answered, another account's slowest answer meanwhile, and this process's peak RSS growth. */
export interface Stall<T> {
  result: T;
  slowestMs: number;
  rssMiB: number;
}

/**
 * Another account's slowest answer while `attack` runs, for tests of attacks on the gateway's event
 * loop: `victim` (one request, resolving to its time in ms) is called again and again until the attack
 * is answered, so a stall anywhere during the attack shows in one of its times. Tests compare the
 * result with the same measure taken in the same test while a harmless call of the same size runs
 * (what the bytes alone cost), never with a fixed number of milliseconds. Also reports the peak RSS
 * growth of this process (the in-process gateway's) during the attack.
 */
export async function slowestWhile<T>(victim: () => Promise<number>, attack: () => Promise<T>): Promise<Stall<T>> {
  let done = false;
  let slowestMs = 0;
  const loop = (async () => {
    do slowestMs = Math.max(slowestMs, await victim());
    while (!done);
  })();
  const { result, rssMiB } = await peakGrowth(async () => {
    try {
      return await attack();
    } finally {
      done = true;
    }
  });
  await loop;
  return { result, slowestMs, rssMiB };
}

/**
 * `slowestWhile` of `attack` and of `harmless` (a call of the same size), paired, up to `tries` times:
 * the first pair where the attack's stall is under `factor` times the harmless call's, or else the
 * pair with the lowest ratio. The test files run side by side on two cores, so another file's burst can
 * land in one measurement (a CI run saw 199 ms against a 44 ms baseline, 4.5×, for an HTTP flood refused
 * from its first kilobytes, 2026-11-28); the stalls these tests guard against (seconds, #25 N1) show in
 * every try, so the lowest of a few ratios still fails when the gateway stalls.
 */
export async function stallAgainstBaseline<B, A>(
  victim: () => Promise<number>,
  harmless: () => Promise<B>,
  attack: () => Promise<A>,
  { factor, tries = 3 }: { factor: number; tries?: number },
): Promise<{ baseline: Stall<B>; attacked: Stall<A> }> {
  type Pair = { baseline: Stall<B>; attacked: Stall<A> };
  let best: Pair | undefined;
  const ratio = (pair: Pair) => pair.attacked.slowestMs / pair.baseline.slowestMs;
  for (let i = 0; i < tries; i++) {
    const pair = { baseline: await slowestWhile(victim, harmless), attacked: await slowestWhile(victim, attack) };
    if (!best || ratio(pair) < ratio(best)) best = pair;
    if (ratio(best) < factor) break;
  }
  return best!;
}
