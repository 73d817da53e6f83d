/**
 * `npx tsx bench/userspace-admission.ts [--keys N] [--requests N]`: what user-space keys and budgets cost
 * on the request path, in process, side by side in one run: the admission of one request (key lookup,
 * blocked account, permission, rates, service access, budgets) with a config-file key of an account without budgets (the baseline),
 * and with one of N stored keys (default 100,000) whose account and key both have budgets. Prints
 * microseconds per admission of each and their difference; no threshold (the lead reads it on a quiet
 * machine, beside the 3c row of `npm run bench`).
 */
import { parseArgs } from 'node:util';
import { Directory } from '../core/admission/directory.js';
import { Pipeline } from '../core/admission/pipeline.js';
import { RateLimiter } from '../core/admission/request-rate/local-rate-limiter.js';
import { hashSecret } from '../core/admission/secret-hashes.js';
import { buildConfig } from '../core/config/load.js';
import { silentLogger } from '../core/observe/logger.js';
import { MemoryDocStore } from '../core/storage/memory-docs.js';
import { BudgetGate } from '../core/userspace/budgets.js';
import { keyEntry, type KeyDoc } from '../core/userspace/keys.js';

const { values } = parseArgs({ options: { keys: { type: 'string' }, requests: { type: 'string' } } });
const KEYS = Number(values.keys ?? 100_000);
const REQUESTS = Number(values.requests ?? 200_000);
const CONFIG_KEY = 'bench-config-key-0123456789';
const STORED_KEY = 'bench-stored-key-0123456789';
const BUDGETS = [
  { unit: 'tokens', limit: 1e12, period: 'day' },
  { unit: 'money', limit: 1e9, period: 'month' },
] as const;

const config = buildConfig(
  {
    server: { httpPort: 0, grpcPort: 0 },
    accounts: [
      { id: 1, name: 'bench', requestsPerSecond: 1_000_000_000, budgets: BUDGETS },
      // The baseline's account: no budgets, as before the user space.
      { id: 2, name: 'plain', requestsPerSecond: 1_000_000_000 },
    ],
    apiKeys: [{ name: 'config-key', account: 'plain', key: CONFIG_KEY, permissions: ['MODEL_REQUESTS'] }],
    services: [{ id: 1, name: 'echo', account: 'bench', public: true, connectionTokens: [{ token: 'bench-echo-token-000001' }] }],
    store: { kind: 'memory' },
  },
  { env: {} },
);
const directory = new Directory(config);
const stored = (i: number, secret: string, budgets: KeyDoc['budgets']): KeyDoc => ({
  _id: `key_${i}`,
  accountId: 1,
  name: `stored-${i}`,
  keyHash: hashSecret(secret),
  prefix: secret.slice(0, 8),
  permissions: ['MODEL_REQUESTS'],
  budgets,
  createdAt: 0,
  seq: i,
});
for (let i = 1; i < KEYS; i++) directory.putKey(keyEntry(stored(i, `bench-filler-${i}`, [])));
directory.putKey(keyEntry(stored(KEYS, STORED_KEY, [...BUDGETS])));

const budgets = await BudgetGate.open(new MemoryDocStore(), silentLogger());
const pipeline = new Pipeline(directory, new RateLimiter(), { concurrentStreamsPerAccount: 1_000_000 });
pipeline.useBudgets(budgets);
const request = (key: string) => ({
  apiKey: key,
  keyHeader: 'Authorization',
  permission: 'MODEL_REQUESTS' as const,
  account: 'bench',
  model: 'echo',
});

function measure(key: string): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < REQUESTS; i++) pipeline.admit(request(key));
  return Number(process.hrtime.bigint() - started) / 1000 / REQUESTS;
}

// The budgets' first leases (the memory store answers within a tick; a loop that never yields would
// see only the one request a gateway admits before its first lease), then the JIT's warm-up.
for (const key of [CONFIG_KEY, STORED_KEY]) {
  pipeline.admit(request(key));
  await new Promise((r) => setTimeout(r, 50));
}
measure(CONFIG_KEY);
measure(STORED_KEY);
const rows: { round: number; config: number; stored: number }[] = [];
for (let round = 1; round <= 3; round++) {
  const base = measure(CONFIG_KEY);
  const withKeys = measure(STORED_KEY);
  rows.push({ round, config: base, stored: withKeys });
  await new Promise((r) => setTimeout(r, 10));
}
for (const r of rows) {
  process.stdout.write(
    `round ${r.round}: config key ${r.config.toFixed(2)} µs, stored key of ${KEYS} with account and key budgets ${r.stored.toFixed(2)} µs per admission (+${(r.stored - r.config).toFixed(2)} µs)\n`,
  );
}
budgets.close();
