/**
 * A MongoDB for tests. Order of preference:
 *  1. `MONGODB_URI` (a real MongoDB, or whatever .ci/run started): each `startMongo()` call gets a fresh
 *     database on it, dropped again by `stop()`.
 *  2. mongo-java-server (in-memory, MongoDB wire protocol) from `.ci/mongo-java-server`: needs `java` and
 *     `.ci/mongo-java-server/cp.txt` (written by the mvn line below). Each call spawns its own server on
 *     a free loopback port; `stop()` closes its stdin, which ends it (a killed test run leaves no server).
 *  3. Neither: `mongoPrerequisite()` is unavailable and says how to get one.
 *
 * mongo-java-server gaps (see shared/reference/task-store.md): no transactions, TTL and non-unique
 * secondary indexes ignored, only the legacy `ismaster` handshake: never set `serverApi`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import mongoose from 'mongoose';
import type { Prerequisite } from './prerequisites.js';

const SERVER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../.ci/mongo-java-server');
const CLASSPATH_FILE = resolve(SERVER_DIR, 'cp.txt');
const LAUNCHER = resolve(SERVER_DIR, 'MongoWireServer.java');
const RESOLVE_HINT =
  'run `bash .ci/run`, or `mvn -q -f .ci/mongo-java-server/pom.xml dependency:build-classpath -Dmdep.outputFile=cp.txt` ' +
  '(needs Java 17 and Maven), or set MONGODB_URI to a MongoDB server';
const START_TIMEOUT_MS = 30_000;

export interface MongoTestServer {
  /** A fresh database of its own: `mongodb://…/<unique-db>`. */
  uri: string;
  /** Another fresh database on the same server (one per test keeps tests apart without a new server). */
  freshDatabaseUri(): string;
  /** Drops the databases handed out (real MongoDB) or ends the spawned server. */
  stop(): Promise<void>;
}

let javaChecked: boolean | undefined;
function hasJava(): boolean {
  if (javaChecked === undefined) javaChecked = spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;
  return javaChecked;
}

export function mongoPrerequisite(): Prerequisite {
  if (process.env.MONGODB_URI) return { available: true, reason: '' };
  if (!hasJava()) return { available: false, reason: `no MONGODB_URI and no \`java\` on PATH: ${RESOLVE_HINT}` };
  if (!existsSync(CLASSPATH_FILE)) {
    return { available: false, reason: `no MONGODB_URI and no .ci/mongo-java-server/cp.txt: ${RESOLVE_HINT}` };
  }
  return { available: true, reason: '' };
}

/** `base` with its database replaced by a new unique name (query options kept). */
export function withUniqueDatabase(base: string): string {
  const url = new URL(base);
  url.pathname = `/gw_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  return url.toString();
}

export async function startMongo(): Promise<MongoTestServer> {
  const external = process.env.MONGODB_URI;
  if (external) return externalServer(external);
  const prerequisite = mongoPrerequisite();
  if (!prerequisite.available) throw new Error(`MongoDB for tests unavailable: ${prerequisite.reason}`);
  return spawnJavaServer();
}

function externalServer(base: string): MongoTestServer {
  const handedOut: string[] = [];
  const fresh = (): string => {
    const uri = withUniqueDatabase(base);
    handedOut.push(uri);
    return uri;
  };
  return {
    uri: fresh(),
    freshDatabaseUri: fresh,
    async stop() {
      const client = new mongoose.mongo.MongoClient(base, { serverSelectionTimeoutMS: 5_000 });
      try {
        await client.connect();
        for (const uri of handedOut) await client.db(new URL(uri).pathname.slice(1)).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}

async function spawnJavaServer(): Promise<MongoTestServer> {
  const classpath = readFileSync(CLASSPATH_FILE, 'utf8').trim();
  const child = spawn('java', ['-cp', classpath, LAUNCHER, '0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const port = await waitForPort(child, () => stderr);
  const base = `mongodb://127.0.0.1:${port}/test?directConnection=true`;
  return {
    uri: withUniqueDatabase(base),
    freshDatabaseUri: () => withUniqueDatabase(base),
    stop: () => stopChild(child),
  };
}

function waitForPort(child: ChildProcess, stderr: () => string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const fail = (why: string): void => {
      clearTimeout(timer);
      lines.close();
      child.kill('SIGKILL');
      reject(new Error(`mongo-java-server did not start: ${why}\n${stderr()}`));
    };
    const timer = setTimeout(() => fail(`no LISTENING line within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    child.once('error', (err) => fail(err.message));
    child.once('exit', (code) => fail(`exited with code ${String(code)}`));
    lines.on('line', (line) => {
      const match = /^LISTENING (\d+)$/.exec(line.trim());
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.removeAllListeners('error');
      resolvePort(Number(match[1]));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.stdin?.end();
  });
}
