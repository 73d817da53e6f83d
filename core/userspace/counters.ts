import type { Collection } from '../storage/port.js';
import type { MetaDoc } from './collections.js';

/**
 * The next number of counter `name` (one `findOneAndUpdate` with `$inc`, upserted on first use), atomic
 * across every gateway on the store. With `floor`, numbers start above it: stored accounts and services
 * take IDs above the largest one in the config file.
 */
export async function nextNumber(meta: Collection<MetaDoc>, name: string, floor = 0): Promise<number> {
  for (;;) {
    const after = await meta.findOneAndUpdate({ _id: name }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' });
    const n = after!.n;
    if (n > floor) return n;
    // First use below the floor: jump to it, once, whoever wins; the loser takes the next number.
    const jumped = await meta.findOneAndUpdate({ _id: name, n }, { $set: { n: floor + 1 } }, { returnDocument: 'after' });
    if (jumped) return floor + 1;
  }
}

/** The counter's current value (0 before its first use). */
export async function currentNumber(meta: Collection<MetaDoc>, name: string): Promise<number> {
  return (await meta.get(name))?.n ?? 0;
}
