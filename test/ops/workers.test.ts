/**
 * `server.workers: 2` as `npm start` runs it, from the sources (`node --import tsx core/bin/start.ts`: a node:cluster
 * primary and two gateway workers) on MongoDB (MONGODB_URI, else mongo-java-server; skipped loudly
 * without either), with a real SDK model service in the test process that dials the shared gRPC port:
 * the cluster update moves it to one stream per worker, requests on the one HTTP port reach both
 * workers and find each other's state, a killed worker is forked again and the service reconnects
 * to it, /metrics sums every worker, and SIGTERM drains both. Without MongoDB a stateful plugin on the memory store is refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, eventually } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { freePort } from '../support/ports.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { processAlive } from '../../scripts/process-alive.mjs';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const P = '/api/platformgateway/account/demo';

interface Answer {
  status: number;
  worker: string | undefined;
  body: any;
}

/** One request on a connection of its own: the primary hands each new connection to the next worker. */
function call(url: string, method: 'GET' | 'POST', body?: unknown): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = httpRequest(
      url,
      { method, agent: false, headers: { 'PLATFORM-API-KEY': TEST_KEY, 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          done({ status: res.statusCode ?? 0, worker: res.headers['x-gateway-worker'] as string | undefined, body: parsed });
        });
      },
    );
    req.on('error', fail);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The gateway's JSON log lines on stdout. */
class GatewayOutput {
  readonly text: string[] = [];
  lines(): Record<string, any>[] {
    return this.text
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, any>);
  }
  /** The pid of each worker that logged `gateway listening`, latest last. */
  workerPids(index: number): number[] {
    return this.lines()
      .filter((l) => l.msg === 'gateway listening' && l.worker === index)
      .map((l) => l.pid as number);
  }
}

function startGateway(configPath: string, env: Record<string, string>, output: GatewayOutput): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/bin/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_CONFIG: configPath, LOG_FORMAT: 'json', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => output.text.push(c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => output.text.push(c.toString('utf8')));
  return child;
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/**
 * Waits for the banner. Fails at once when the gateway exits first, and with the output as it is at
 * the failure (one CI run timed out here after 60 s with the output as it was at the call: empty).
 */
async function ready(child: ChildProcess, output: GatewayOutput, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const failed = (why: string) => new Error(`the gateway ${why}:\n${output.text.join('')}`);
  while (!output.text.join('').includes('Gateway ready')) {
    if (hasExited(child)) throw failed(`exited (${child.exitCode ?? child.signalCode})`);
    if (Date.now() > deadline) throw failed(`not ready in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A port from freePort() taken by another test's socket before the gateway bound it (the suite runs files side by side). */
const lostPortRace = (output: GatewayOutput) => output.text.join('').includes('EADDRINUSE');

const exited = (child: ChildProcess) =>
  hasExited(child) ? Promise.resolve(child.exitCode) : new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

describe.skipIf(!requirePrerequisite('gateway workers on MongoDB', mongoPrerequisite()))('server.workers: 2 on MongoDB', () => {
  let mongo: MongoTestServer;
  let dir: string;
  let gateway: ChildProcess | undefined;
  let service: ModelService | undefined;
  let httpUrl: string;
  let sharedGrpc: string;
  const output = new GatewayOutput();
  let served = 0;

  beforeAll(async () => {
    mongo = await startMongo();
    dir = await mkdtemp(join(tmpdir(), 'gw-workers-'));
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    httpUrl = `http://127.0.0.1:${httpPort}`;
    sharedGrpc = `127.0.0.1:${grpcPort}`;
    await writeFile(
      join(dir, 'gateway.json'),
      JSON.stringify({
        // workerGrpcPort 0: the primary picks a free port for each worker.
        server: { host: '127.0.0.1', httpPort, grpcPort, workers: 2, workerGrpcPort: 0 },
        gate: { heartbeatIntervalMs: 500, drainTimeoutMs: 3000 },
        store: { kind: 'mongodb', mongodbUri: mongo.freshDatabaseUri() },
        accounts: [{ id: 1, name: 'demo', requestsPerSecond: 1000 }],
        apiKeys: [{ name: 'all', account: 'demo', key: TEST_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] }],
        services: [{ id: 10, name: 'echo', account: 'demo', public: true, connectionTokens: [{ token: ECHO_TOKEN }] }],
        plugins: {
          enabled: ['health', 'metrics', 'sync-predict', 'async-predict'],
          options: { 'async-predict': { pollMs: 100 }, metrics: { unauthenticated: true } },
        },
      }),
    );
  });
  afterAll(async () => {
    await service?.stop();
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGKILL');
      await exited(gateway);
    }
    await mongo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The serving instances the worker that answered sees (one per worker means one stream each). */
  const instancesByWorker = async (): Promise<Map<string, number>> => {
    const seen = new Map<string, number>();
    for (let i = 0; i < 8 && seen.size < 2; i++) {
      const res = await call(`${httpUrl}/health`, 'GET');
      if (res.worker !== undefined) seen.set(res.worker, (res.body?.instances?.['demo/echo'] as number | undefined) ?? 0);
    }
    return seen;
  };

  it('serves one HTTP port from both workers, with the service holding one stream per worker', async () => {
    gateway = startGateway(join(dir, 'gateway.json'), {}, output);
    await ready(gateway, output);
    expect(output.text.join('')).toMatch(/Workers: +2, own gRPC ports 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+/);
    // (Log lines are written asynchronously: the banner may come first.)
    await eventually(() => output.lines().some((l) => l.msg === 'gateway workers listening'), 10_000, 'the primary to log the ports');
    const listening = output.lines().find((l) => l.msg === 'gateway workers listening')!;
    const own = (listening.ownGrpcPorts as number[]).map((p) => `127.0.0.1:${p}`);
    expect(own).toHaveLength(2);
    expect(listening.sharedGrpcPort).toBe(Number(sharedGrpc.split(':')[1]));

    // The service is configured with the shared port only; the cluster update takes it to both workers.
    service = new ModelService(
      {
        predict: (req) => {
          served++;
          return { echo: req.data.json<{ text: string }>().text };
        },
      },
      {
        descriptor: { name: 'echo' },
        gateways: [sharedGrpc],
        connectionToken: ECHO_TOKEN,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      },
    );
    service.start();
    await eventually(
      () => service!.connectedGateways().sort().join() === [...own].sort().join(),
      20_000,
      'the service to hold a stream to each worker',
    );
    expect(service.gateways().sort()).toEqual([...own].sort());
    await eventually(
      async () => {
        const seen = await instancesByWorker();
        return seen.size === 2 && [...seen.values()].every((n) => n === 1);
      },
      20_000,
      'each worker to see exactly one instance',
    );

    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call(`${httpUrl}/api/platformgate/account/demo/model/echo/predict`, 'POST', { text: `t${i}` })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(answers.map((a) => a.body.echo)).toEqual(Array.from({ length: 8 }, (_, i) => `t${i}`));
    expect(new Set(answers.map((a) => a.worker))).toEqual(new Set(['0', '1']));
    expect(served).toBeGreaterThanOrEqual(8);

    // /metrics answers for every worker, whichever takes the scrape: the primary sums their figures.
    const predicts = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('gateway_http_requests_total{') && l.includes('plugin="sync-predict"') && l.includes('status="200"'))
        .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    const scrapedBy = new Map<string, number>();
    await eventually(
      async () => {
        const res = await call(`${httpUrl}/metrics`, 'GET');
        if (res.status === 200 && res.worker !== undefined) scrapedBy.set(res.worker, predicts(res.body as string));
        return scrapedBy.size === 2 && [...scrapedBy.values()].every((n) => n === 8);
      },
      20_000,
      'both workers to report the 8 predicts of both',
    );
  }, 120_000);

  it('shares the store: an async task created on one worker is read to completion from both', async () => {
    const created = await Promise.all(
      Array.from({ length: 4 }, (_, i) => call(`${httpUrl}${P}/model/echo/async/predict-with-config`, 'POST', { data: { text: `a${i}` } })),
    );
    expect(created.map((c) => c.status)).toEqual([200, 200, 200, 200]);
    const readers = new Set<string>();
    await eventually(
      async () => {
        const reads = await Promise.all(created.map((c) => call(`${httpUrl}${P}/async/task/${c.body as string}`, 'GET')));
        for (const r of reads) readers.add(r.worker ?? '?');
        return reads.every((r) => r.status === 200 && r.body.status === 'COMPLETED');
      },
      30_000,
      'every task to complete',
    );
    expect(new Set(created.map((c) => c.worker))).toEqual(new Set(['0', '1']));
    expect(readers).toEqual(new Set(['0', '1']));
  }, 60_000);

  it('forks a killed worker again and the service reconnects to it', async () => {
    const [before] = output.workerPids(1);
    expect(before).toBeDefined();
    process.kill(before!, 'SIGKILL');
    await eventually(() => output.workerPids(1).length === 2, 30_000, 'worker 1 to be forked again and listen');
    expect(output.lines().some((l) => l.msg === 'gateway worker exited; restarting it' && l.worker === 1 && l.signal === 'SIGKILL')).toBe(
      true,
    );
    await eventually(
      async () => {
        const seen = await instancesByWorker();
        return seen.size === 2 && [...seen.values()].every((n) => n === 1);
      },
      30_000,
      'the service to stream to the new worker 1 again',
    );
    expect(service!.connectedGateways()).toHaveLength(2);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call(`${httpUrl}/api/platformgate/account/demo/model/echo/predict`, 'POST', { text: `r${i}` })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(new Set(answers.map((a) => a.worker))).toEqual(new Set(['0', '1']));
  }, 90_000);

  it('drains both workers on SIGTERM to the primary and exits 0', async () => {
    const pids = [output.workerPids(0).at(-1)!, output.workerPids(1).at(-1)!];
    gateway!.kill('SIGTERM');
    expect(await exited(gateway!)).toBe(0);
    expect(
      output
        .lines()
        .filter((l) => l.msg === 'worker shutting down: draining')
        .map((l) => l.worker)
        .sort(),
    ).toEqual([0, 1]);
    expect(pids.filter(processAlive)).toEqual([]);
  }, 60_000);
});

describe('GATEWAY_WORKERS=2 on the default store (embedded, no MongoDB)', () => {
  let dir: string;
  let gateway: ChildProcess | undefined;
  let service: ModelService | undefined;
  afterAll(async () => {
    await service?.stop();
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGKILL');
      await exited(gateway);
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('starts, and an async task created on either worker is read to completion from both', async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-workers-embedded-'));
    const env: Record<string, string> = { GATEWAY_WORKERS: '2', MONGODB_URI: '' };
    let output = new GatewayOutput();
    let httpPort = 0;
    let grpcPort = 0;
    for (let attempt = 1; ; attempt++) {
      [httpPort, grpcPort] = [await freePort(), await freePort()];
      // No store section: the embedded default, under .data next to this config.
      await writeFile(
        join(dir, 'gateway.json'),
        JSON.stringify({
          server: { host: '127.0.0.1', httpPort, grpcPort, workerGrpcPort: 0 },
          gate: { heartbeatIntervalMs: 500, drainTimeoutMs: 3000 },
          accounts: [{ id: 1, name: 'demo', requestsPerSecond: 1000 }],
          apiKeys: [{ name: 'all', account: 'demo', key: TEST_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] }],
          services: [{ id: 10, name: 'echo', account: 'demo', public: true, connectionTokens: [{ token: ECHO_TOKEN }] }],
          plugins: { enabled: ['health', 'sync-predict', 'async-predict'], options: { 'async-predict': { pollMs: 100 } } },
        }),
      );
      output = new GatewayOutput();
      gateway = startGateway(join(dir, 'gateway.json'), env, output);
      try {
        await ready(gateway, output);
        break;
      } catch (err) {
        if (attempt === 3 || !lostPortRace(output)) throw err;
        await exited(gateway);
      }
    }
    const httpUrl = `http://127.0.0.1:${httpPort}`;
    expect(output.text.join('')).toContain('store embedded');
    service = new ModelService(
      { predict: (req) => ({ echo: req.data.json<{ text: string }>().text }) },
      {
        descriptor: { name: 'echo' },
        gateways: [`127.0.0.1:${grpcPort}`],
        connectionToken: ECHO_TOKEN,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      },
    );
    service.start();
    await eventually(() => service!.connectedGateways().length === 2, 20_000, 'the service to hold a stream to each worker');
    const seen = new Map<string, number>();
    await eventually(
      async () => {
        const res = await call(`${httpUrl}/health`, 'GET');
        if (res.worker !== undefined) seen.set(res.worker, (res.body?.instances?.['demo/echo'] as number | undefined) ?? 0);
        return seen.size === 2 && [...seen.values()].every((n) => n === 1);
      },
      20_000,
      'each worker to see the instance',
    );

    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call(`${httpUrl}${P}/model/echo/async/predict-with-config`, 'POST', { data: { text: `e${i}` } })),
    );
    expect(created.map((c) => c.status)).toEqual(Array(6).fill(200));
    expect(new Set(created.map((c) => c.worker))).toEqual(new Set(['0', '1']));
    const readers = new Set<string>();
    await eventually(
      async () => {
        const reads = await Promise.all(created.map((c) => call(`${httpUrl}${P}/async/task/${c.body as string}`, 'GET')));
        for (const r of reads) readers.add(r.worker ?? '?');
        return reads.every((r) => r.status === 200 && r.body.status === 'COMPLETED');
      },
      30_000,
      'every task to complete',
    );
    expect(readers).toEqual(new Set(['0', '1']));
    const results = await Promise.all(created.map((c) => call(`${httpUrl}${P}/async/task/${c.body as string}/response`, 'GET')));
    expect(results.map((r) => r.body.echo)).toEqual(Array.from({ length: 6 }, (_, i) => `e${i}`));
  }, 120_000);
});

describe('server.workers on the memory store', () => {
  it('refuses to start when a plugin would keep state in one worker, naming the setting and MongoDB', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-workers-memory-'));
    try {
      const configPath = join(dir, 'gateway.json');
      await writeFile(
        configPath,
        JSON.stringify({
          server: { host: '127.0.0.1', httpPort: 0, grpcPort: 0 },
          store: { kind: 'memory' },
          plugins: { enabled: ['sync-predict', 'async-predict'] },
        }),
      );
      const output = new GatewayOutput();
      const child = startGateway(configPath, { GATEWAY_WORKERS: '2' }, output);
      expect(await exited(child)).toBe(1);
      const text = output.text.join('');
      expect(text).toContain('Gateway did not start: CONFIG_INVALID');
      expect(text).toContain('server.workers is 2 with store.kind memory: the state of async-predict would live in one worker');
      expect(text).toContain('use MongoDB (store.kind: mongodb, or MONGODB_URI)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
