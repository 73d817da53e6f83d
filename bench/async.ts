/**
 * Async predict throughput: tasks created over HTTP and completed by the workers, per second, with
 * each task store (memory; MongoDB when MONGODB_URI is set or mongo-java-server is available), next to
 * the synchronous rate of the same service over gRPC `Gate.process` (unary predict), measured in the
 * same run on the same gateway. The gateway and the load run in this process; the model service (the
 * TypeScript SDK, bench/echo-service.ts) runs in its own process, as a model service does.
 *
 *   npx tsx bench/async.ts [--tasks 4000] [--mongo-tasks 1000] [--concurrency 64] [--rounds 3] [--stores memory,mongodb]
 *
 * MongoDB without MONGODB_URI is mongo-java-server, an in-memory test server that ignores secondary
 * indexes (every query scans the collection, which grows each round) and runs one operation per
 * collection at a time: its number says little about a real MongoDB.
 *
 * Async: `--concurrency` callers POST `async/predict-with-config`, open loop, the tasks spread over
 * enough accounts that none reaches its idle cap of 250 (the caps of spec section 8 are a policy, not
 * what is measured; a 429 would be retried after 5 ms and counted); the timer stops when the last task
 * is COMPLETED. Sync: the same number of concurrent `process` calls. The two alternate for `--rounds`
 * rounds (other work on the machine hits both alike) and the medians are printed. No assertions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildConfig } from '../core/config/load.js';
import { createGateway, type Gateway } from '../core/gateway.js';
import { silentLogger } from '../core/observe/logger.js';
import { TASKS as TASKS_COLLECTION } from '../core/tasks/doc-task-store.js';
import { GateClient } from '../sdk/index.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../test/support/mongo-server.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const TOKEN = 'bench-service-token-0001';
const keyOf = (account: number) => `bench-key-account-${account}-000000000`;

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '4000' },
    'mongo-tasks': { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '3' },
    stores: { type: 'string', default: 'memory,mongodb' },
  },
});
const TASKS = Number(args.tasks);
const MONGO_TASKS = Number(args['mongo-tasks']);
const CONCURRENCY = Number(args.concurrency);
const ROUNDS = Number(args.rounds);
/** Enough accounts that no account reaches the idle cap (250 queued): the caps are policy, not speed. */
const ACCOUNTS = Math.max(4, Math.ceil(Math.max(TASKS, MONGO_TASKS) / 200));

function gatewayConfig(store: Record<string, unknown>): Record<string, unknown> {
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({ id: i + 1, name: `bench${i + 1}`, requestsPerSecond: 1_000_000 }));
  return {
    server: { host: '127.0.0.1', httpPort: 0, grpcPort: 0 },
    store,
    accounts,
    apiKeys: accounts.map((a) => ({
      name: `k${a.id}`,
      account: a.id,
      key: keyOf(a.id),
      permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'],
    })),
    services: [{ id: 10, name: 'echo', account: 1, public: true, connectionTokens: [{ token: TOKEN }] }],
    plugins: { enabled: ['async-predict'], options: { 'async-predict': { concurrency: CONCURRENCY, pollMs: 200 } } },
  };
}

async function startService(grpcAddress: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/echo-service.ts')], {
    env: { ...process.env, PLATFORM_GRPC_HOST: grpcAddress, PLATFORM_SERVICE_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((ready, fail) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('READY')) ready();
    });
    child.once('exit', (code) => fail(new Error(`echo service exited (${String(code)})`)));
  });
  return child;
}

/** Runs `worker` on `concurrency` parallel loops until `total` items are done. */
async function inParallel(total: number, concurrency: number, worker: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await worker(next++);
    }),
  );
}

async function measureSync(client: GateClient, total: number): Promise<number> {
  const started = performance.now();
  await inParallel(total, CONCURRENCY, async (i) => {
    await client.process(
      { predict: { data: { json: JSON.stringify({ n: i }) } } },
      { account: 'bench1', model: 'echo', authToken: keyOf((i % ACCOUNTS) + 1) },
    );
  });
  return (total / (performance.now() - started)) * 1000;
}

function post(agent: Agent, url: URL, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'PLATFORM-API-KEY': key, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function measureAsync(gateway: Gateway, httpUrl: string, total: number): Promise<{ rate: number; retried: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const url = new URL('/api/platformgateway/account/bench1/model/echo/async/predict-with-config', httpUrl);
  const ids: string[] = [];
  let retried = 0;
  const started = performance.now();
  await inParallel(total, CONCURRENCY, async (i) => {
    for (;;) {
      const res = await post(agent, url, keyOf((i % ACCOUNTS) + 1), JSON.stringify({ data: { n: i } }));
      if (res.status === 200) {
        ids.push(JSON.parse(res.text) as string);
        return;
      }
      if (res.status !== 429) throw new Error(`create answered ${res.status}: ${res.text}`);
      retried++;
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  const store = gateway.store;
  // One count query per poll on MongoDB (the test server scans the collection for each); the memory
  // store counts in a loop at no cost, so it is polled often.
  const onMongo = gateway.storage.kind === 'mongodb';
  const tasks = await gateway.storage.docs.collection<{ _id: string }>(TASKS_COLLECTION);
  const pending = onMongo
    ? () => tasks.count({ status: { $in: ['QUEUED', 'PROCESSING'] } })
    : async () => {
        let n = 0;
        for (let a = 1; a <= ACCOUNTS; a++) n += (await store.countQueued(a)) + (await store.countRunning(a));
        return n;
      };
  const pollMs = onMongo ? 100 : 10;
  while ((await pending()) > 0) await new Promise((r) => setTimeout(r, pollMs));
  const rate = (total / (performance.now() - started)) * 1000;
  agent.destroy();
  for (const id of ids) {
    const task = await store.get(id);
    if (task?.status !== 'COMPLETED') throw new Error(`task ${id} ended ${task?.status}`);
  }
  return { rate, retried };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function runStore(name: string, store: Record<string, unknown>, tasks: number): Promise<void> {
  const gateway = await createGateway(buildConfig(gatewayConfig(store), { env: {} }), { logger: silentLogger() });
  const { httpUrl, grpcAddress } = await gateway.start();
  const service = await startService(grpcAddress);
  const client = new GateClient({ address: grpcAddress });
  try {
    // Warm-up: JIT, connections, the store's indexes.
    await measureSync(client, 500);
    await measureAsync(gateway, httpUrl, 500);
    const syncRates: number[] = [];
    const asyncRates: number[] = [];
    let retried = 0;
    for (let round = 0; round < ROUNDS; round++) {
      syncRates.push(await measureSync(client, tasks));
      const measured = await measureAsync(gateway, httpUrl, tasks);
      asyncRates.push(measured.rate);
      retried += measured.retried;
    }
    const [rate, sync] = [median(asyncRates), median(syncRates)];
    console.log(
      `${name.padEnd(8)} ${String(tasks).padStart(5)} tasks  async ${rate.toFixed(0).padStart(6)} tasks/s   sync ${sync.toFixed(0).padStart(6)} req/s   async/sync ${(rate / sync).toFixed(2)}` +
        `   (rounds: async ${asyncRates.map((r) => r.toFixed(0)).join(' ')}; sync ${syncRates.map((r) => r.toFixed(0)).join(' ')})${retried ? `; ${retried} creations retried after 429` : ''}`,
    );
  } finally {
    client.close?.();
    service.kill('SIGTERM');
    await gateway.close();
  }
}

async function main(): Promise<void> {
  const stores = args.stores.split(',');
  console.log(`async predict vs Gate.process: ${ROUNDS} rounds, concurrency ${CONCURRENCY}, ${ACCOUNTS} accounts, node ${process.version}`);
  if (stores.includes('memory')) {
    const dataDir = await mkdtemp(join(tmpdir(), 'bench-async-'));
    try {
      await runStore('memory', { kind: 'memory', dataDir }, TASKS);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  if (stores.includes('mongodb')) {
    const prerequisite = mongoPrerequisite();
    if (!prerequisite.available) {
      console.log(`mongodb  skipped: ${prerequisite.reason}`);
      return;
    }
    let mongo: MongoTestServer | undefined;
    try {
      mongo = await startMongo();
      await runStore('mongodb', { kind: 'mongodb', mongodbUri: mongo.uri }, MONGO_TASKS);
    } finally {
      await mongo?.stop();
    }
  }
}

await main();
