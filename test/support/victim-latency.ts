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

/**
 * Another account's slowest answer while `attack` runs, for tests of attacks on the gateway's event
 * loop: `victim` (one request, resolving to its time in ms) is called again and again until the attack
 * is answered, so a stall anywhere during the attack shows in one of its times. Tests compare the
 * result with the same measure taken in the same test while a harmless call of the same size runs
 * (what the bytes alone cost), never with a fixed number of milliseconds. Also reports the peak RSS
 * growth of this process (the in-process gateway's) during the attack.
 */
export async function slowestWhile<T>(
  victim: () => Promise<number>,
  attack: () => Promise<T>,
): Promise<{ result: T; slowestMs: number; rssMiB: number }> {
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
