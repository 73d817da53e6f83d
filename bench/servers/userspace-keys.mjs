/**
 * Seeds a bench gateway's store with `count` stored user-space keys of account `bench` (row 3c), written
 * straight into `us_keys` with change-feed numbers, the way the API writes them; the last one is
 * `measuredKey` (bench/lib/config.ts's measuredKey) with `budgets`. Returns once the gateway's change feed applied them (the key works).
 * Plain JavaScript for the reason bench/servers/gateway.mjs gives.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { hashSecret } from '../../dist/core/admission/secret-hashes.js';
import { KEYS, META } from '../../dist/core/userspace/collections.js';

export async function seedUserSpaceKeys(gateway, count, measuredKey, budgets) {
  const docs = gateway.storage.docs;
  const keys = await docs.collection(KEYS);
  const meta = await docs.collection(META);
  const now = Date.now();
  for (let i = 1; i <= count; i++) {
    const last = i === count;
    const secret = last ? measuredKey : `bench-userspace-filler-${i}`;
    await keys.insert({
      _id: `key_bench${i}`,
      accountId: 1,
      name: last ? 'bench-userspace' : `filler-${i}`,
      keyHash: hashSecret(secret),
      prefix: secret.slice(0, 8),
      permissions: ['MODEL_REQUESTS', 'READ_DATA'],
      budgets: last ? budgets : [],
      createdAt: now,
      seq: i,
    });
  }
  await meta.findOneAndUpdate({ _id: 'seq' }, { $set: { n: count } }, { upsert: true });
  for (let waited = 0; !gateway.directory.callerForKey(measuredKey); waited += 50) {
    if (waited > 60_000) throw new Error('the seeded user-space keys were not applied within 60 s');
    await sleep(50);
  }
}
