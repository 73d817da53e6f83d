/**
 * The store scenario (issue 27): each home of the store port side by side in one run, through the
 * domain stores the gateway uses (so what is measured is what a request pays):
 *
 * - async task round trips: create, claim, complete, read the result, with 4 claimers at once, each on
 *   its own handle to the store (on the embedded store: its own SQLite connection, as a worker process
 *   has); every task must be claimed exactly once (lost or doubled tasks are counted);
 * - claim latency p99 under those 4 claimers;
 * - claims from a backlog: as many tasks queued before anyone claims (a gateway whose workers were
 *   away), then claimed and completed one at a time: each claim's mean and p99 time, which grows with
 *   the backlog where a claim sorts every queued task;
 * - stored responses written and read per second; usage increments per second;
 * - event-loop lag p99 and max over the whole run of each home (the synchronous SQLite calls run on
 *   the loop), as a 5 ms interval timer sees it.
 *
 * Homes: memory, embedded (a fresh temporary folder), MongoDB when MONGODB_URI or the MongoDB-wire test
 * server is available. Ratios are taken against the memory home of the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import type { DocStore } from '../../core/storage/port.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { DocTaskStore } from '../../core/tasks/doc-task-store.js';
import { openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { DocResponseStore } from '../../plugins/chatapi/responses/store.js';
import { DocUsageStore } from '../../plugins/usage/doc-usage-store.js';
import { mongoPrerequisite, startMongo } from '../../test/support/mongo-server.js';
import { percentileOfSorted } from '../lib/stats.js';

export interface StoreOptions {
  /** Tasks per home (MongoDB gets a quarter: the wire test server is slow). */
  tasks: number;
  responses: number;
  usageIncrements: number;
  log: (line: string) => void;
}

export interface StoreHomeResult {
  home: string;
  taskRoundTripsPerSec: number;
  claimP99Ms: number;
  backlogClaimMeanMs: number;
  backlogClaimP99Ms: number;
  lostTasks: number;
  doubledTasks: number;
  responseWritesPerSec: number;
  responseReadsPerSec: number;
  usageIncrementsPerSec: number;
  loopLagP99Ms: number;
  loopLagMaxMs: number;
}

export interface StoreResult {
  settings: Omit<StoreOptions, 'log'>;
  homes: StoreHomeResult[];
  /** Embedded ÷ memory task round trips per second (the target: at least 0.5). */
  embeddedVsMemory: number;
}

const CLAIMERS = 4;
/** Callers the tasks are spread over: the spec's caps (250 queued, 50 running per account) hold as in a gateway. */
const ACCOUNTS = 16;
const DAY_MS = 86_400_000;

interface Home {
  name: string;
  /** A new handle on the same data: what another worker process would hold. */
  handle(): Promise<DocStore>;
  close(): Promise<void>;
}

function memoryHome(): Home {
  const docs = new MemoryDocStore();
  return { name: 'memory', handle: async () => docs, close: () => docs.close() };
}

function embeddedHome(): Home {
  const dir = mkdtempSync(join(tmpdir(), 'bench-store-'));
  const handles: SqliteDocStore[] = [];
  return {
    name: 'embedded',
    async handle() {
      const docs = new SqliteDocStore(dir);
      handles.push(docs);
      return docs;
    },
    async close() {
      for (const h of handles) await h.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function mongoHome(): Promise<Home | undefined> {
  if (!mongoPrerequisite().available) return undefined;
  const server = await startMongo();
  const uri = server.freshDatabaseUri();
  const connections: Array<{ close(): Promise<void> }> = [];
  return {
    name: 'mongodb',
    async handle() {
      const connection = await openMongoConnection(uri);
      connections.push(connection);
      return new MongoDocStore(connection);
    },
    async close() {
      for (const c of connections) await c.close();
      await server.stop();
    },
  };
}

const LAG_TICK_MS = 5;

/**
 * Event-loop lag as a 5 ms interval timer sees it: how late each tick came. A run made only of
 * promise chains starves timers, which the late tick after it then shows (a histogram of libuv's
 * timer would just have no samples).
 */
function lagMeter(): { stop(): { p99: number; max: number } } {
  const samples: number[] = [];
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    samples.push(Math.max(0, now - last - LAG_TICK_MS));
    last = now;
  };
  const timer = setInterval(tick, LAG_TICK_MS);
  return {
    stop() {
      clearInterval(timer);
      tick();
      samples.sort((a, b) => a - b);
      return { p99: percentileOfSorted(samples, 99), max: samples.at(-1) ?? 0 };
    },
  };
}

/** The `n`th task, of one of the ACCOUNTS callers, within the spec's queued cap. */
const createTask = (store: DocTaskStore, n: number, body: Buffer) =>
  store.create(
    { callerId: 1 + (n % ACCOUNTS), serviceId: 10, serviceAccountId: 2, request: { kind: 'raw', body } },
    { maxQueuedPerAccount: 250 },
  );

/** A worker's claim, within the spec's running cap. */
const claimTask = (store: DocTaskStore, workerId: string) => store.claim({ workerId, leaseMs: 60_000, maxRunningPerAccount: 50 });

/**
 * Between two operations the loop takes a turn, as it does between requests that arrive over sockets:
 * the lag then measures the longest synchronous stretch of one store call, not of a whole loop.
 */
const turn = () => new Promise<void>((r) => setImmediate(r));

const perSec = (count: number, startedMs: number) => (count / (performance.now() - startedMs)) * 1000;

async function measureHome(home: Home, options: StoreOptions, tasks: number): Promise<StoreHomeResult> {
  const lag = lagMeter();
  const stores = await Promise.all(
    Array.from({ length: CLAIMERS }, async () => DocTaskStore.open({ docs: await home.handle(), retentionMs: 7 * DAY_MS })),
  );
  const creator = stores[0]!;
  const body = Buffer.from(JSON.stringify({ text: 'x'.repeat(200) }));
  const claimMs: number[] = [];
  const claimedTimes = new Map<string, number>();
  let created = 0;
  let creating = true;
  const started = performance.now();
  // Creators and claimers at once, as a gateway's HTTP handlers and its worker pool run.
  const create = async () => {
    while (created < tasks) {
      created++;
      await createTask(creator, created, body);
      await turn();
    }
    creating = false;
  };
  const claim = async (store: DocTaskStore, i: number) => {
    let done = 0;
    for (;;) {
      const t0 = performance.now();
      const task = await claimTask(store, `w${i}`);
      claimMs.push(performance.now() - t0);
      if (!task) {
        // Nothing claimable once every task is in: the rest were all claimed.
        if (creating === false) return done;
        await new Promise((r) => setTimeout(r, 1));
        continue;
      }
      claimedTimes.set(task.taskId, (claimedTimes.get(task.taskId) ?? 0) + 1);
      await store.complete(task.taskId, task.leaseToken!, {
        statusCode: 200,
        headers: { 'content-type': 'application/json' },
        body: task.requestBody ?? Buffer.alloc(0),
      });
      await store.getResult(task.taskId);
      await turn();
      done++;
    }
  };
  await Promise.all([create(), ...stores.map((s, i) => claim(s, i))]);
  const taskRoundTripsPerSec = perSec(tasks, started);
  const doubledTasks = [...claimedTimes.values()].filter((n) => n > 1).length;
  const lostTasks = tasks - claimedTimes.size;

  const backlog = await claimBacklog(creator, tasks, body);

  const docs = await home.handle();
  const responses = await DocResponseStore.open(docs, { retentionMs: 30 * DAY_MS, maxPerAccount: 1_000_000 });
  const conversation = [
    { role: 'user', content: 'hello there' },
    { role: 'assistant', content: 'Echo: hello there' },
  ];
  let t = performance.now();
  for (let i = 0; i < options.responses; i++) {
    await responses.put({
      id: `resp_${i}`,
      ownerId: 1 + (i % 8),
      createdAt: Date.now(),
      response: { id: `resp_${i}`, object: 'response' },
      inputItems: [],
      conversation,
    });
    await turn();
  }
  const responseWritesPerSec = perSec(options.responses, t);
  t = performance.now();
  for (let i = 0; i < options.responses; i++) {
    await responses.get(`resp_${i}`);
    await turn();
  }
  const responseReadsPerSec = perSec(options.responses, t);

  const usage = await DocUsageStore.open(docs);
  t = performance.now();
  for (let i = 0; i < options.usageIncrements; i++) {
    await usage.add([
      {
        accountId: 1 + (i % 8),
        service: 'demo/echo',
        day: '2026-11-26',
        requests: 1,
        inputTokens: 10,
        outputTokens: 20,
        charges: 0,
        amounts: {},
      },
    ]);
    await turn();
  }
  const usageIncrementsPerSec = perSec(options.usageIncrements, t);
  const loopLag = lag.stop();
  claimMs.sort((a, b) => a - b);
  return {
    home: home.name,
    taskRoundTripsPerSec,
    claimP99Ms: percentileOfSorted(claimMs, 99),
    backlogClaimMeanMs: backlog.reduce((sum, ms) => sum + ms, 0) / backlog.length,
    backlogClaimP99Ms: percentileOfSorted(backlog, 99),
    lostTasks,
    doubledTasks,
    responseWritesPerSec,
    responseReadsPerSec,
    usageIncrementsPerSec,
    loopLagP99Ms: loopLag.p99,
    loopLagMaxMs: loopLag.max,
  };
}

/** `count` tasks queued, then claimed and completed one at a time: each claim's time in ms, sorted. */
async function claimBacklog(store: DocTaskStore, count: number, body: Buffer): Promise<number[]> {
  for (let i = 0; i < count; i++) {
    await createTask(store, i, body);
    await turn();
  }
  const claimMs: number[] = [];
  for (;;) {
    const t0 = performance.now();
    const task = await claimTask(store, 'backlog');
    if (!task) break;
    claimMs.push(performance.now() - t0);
    await store.complete(task.taskId, task.leaseToken!, { statusCode: 200, headers: {}, body: Buffer.alloc(0) });
    await turn();
  }
  if (claimMs.length !== count) throw new Error(`store bench: ${claimMs.length} of a backlog of ${count} claimed`);
  return claimMs.sort((a, b) => a - b);
}

export async function runStore(options: StoreOptions): Promise<StoreResult> {
  const { log, ...settings } = options;
  const homes: StoreHomeResult[] = [];
  const candidates: Array<() => Promise<Home | undefined>> = [async () => memoryHome(), async () => embeddedHome(), mongoHome];
  for (const make of candidates) {
    const home = await make();
    if (!home) {
      log('  mongodb: skipped (no MONGODB_URI and no MongoDB-wire test server)');
      continue;
    }
    try {
      const tasks = home.name === 'mongodb' ? Math.max(20, Math.floor(options.tasks / 4)) : options.tasks;
      const result = await measureHome(home, options, tasks);
      log(
        `  ${home.name}: ${Math.round(result.taskRoundTripsPerSec)} task round trips/s, claim p99 ${result.claimP99Ms.toFixed(2)} ms, from a backlog ${result.backlogClaimMeanMs.toFixed(2)} ms (p99 ${result.backlogClaimP99Ms.toFixed(2)}), loop lag p99 ${result.loopLagP99Ms.toFixed(1)} ms (max ${result.loopLagMaxMs.toFixed(1)})`,
      );
      homes.push(result);
    } finally {
      await home.close();
    }
  }
  const rate = (name: string) => homes.find((h) => h.home === name)?.taskRoundTripsPerSec ?? 0;
  return { settings, homes, embeddedVsMemory: rate('memory') ? rate('embedded') / rate('memory') : 0 };
}
