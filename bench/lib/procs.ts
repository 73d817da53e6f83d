/**
 * Child processes of the benchmark: every server under test runs in its own Node process, started
 * with tsx's loader (TypeScript entry points) and stopped by its own pid. Servers written for the
 * bench report readiness (and their ports) over the IPC channel; others are polled over HTTP.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const TSX_LOADER = require.resolve('tsx');
/** How long a child may take to exit after SIGTERM before it is killed; a profiled one gets longer (below). */
const STOP_GRACE_MS = 5_000;
const PROFILED_STOP_GRACE_MS = 30_000;

/** Repository root (bench/lib → ../..). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Where a results file goes: `--out` when given, else `fallback` in the repository. A relative
 * `--out` is taken from INIT_CWD, not from the bench workspace npm runs the script in; under the root
 * scripts (`npm run bench`, which call npm again for the workspace) that is the repository root.
 */
export function outFile(given: string | undefined, fallback: string): string {
  return given ? resolve(process.env.INIT_CWD ?? process.cwd(), given) : join(ROOT, fallback);
}

export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly process: ChildProcess;
  /** The first IPC message the child sent (its `ready` report), for bench servers. */
  ready: Record<string, unknown>;
  /** Sends `{type}` over IPC and resolves with the child's answer of the same type. */
  ask<T = Record<string, unknown>>(type: string, timeoutMs?: number): Promise<T>;
  /** Resident set size in bytes, read from /proc (no cooperation from the child needed). */
  rss(): number;
  /** CPU time (user + system) the process has used so far, in ms, from /proc. */
  cpuMs(): number;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** Script (repo-relative) or an absolute path; `.ts` files get the tsx loader. */
  script: string;
  /** Runs this executable (with `args`) instead of Node on `script` (a peer written in Python). */
  executable?: string;
  args?: string[];
  env?: Record<string, string | undefined>;
  /** Extra node flags (`--cpu-prof`, `--expose-gc`, …). */
  nodeFlags?: string[];
  /** A command that runs the process (`taskset -c 1 nice -n 19`: bench/lib/cpu-split.ts), before Node. */
  prefix?: string[];
  /** Wait for an IPC `{type:'ready'}` message (bench servers); otherwise resolve at once. */
  waitReady?: boolean;
  readyTimeoutMs?: number;
  /** Where stdout/stderr go; default: stderr is kept for error reports, stdout dropped. */
  stdout?: 'ignore' | 'inherit';
}

export async function startChild(name: string, options: SpawnOptions): Promise<Child> {
  const script = options.script.startsWith('/') ? options.script : `${ROOT}${options.script}`;
  const flags = [...(options.nodeFlags ?? []), ...(script.endsWith('.ts') ? ['--import', TSX_LOADER] : [])];
  // V8 writes a CPU profile only at exit, and an attacked gateway's graceful close can take longer
  // than 5 s (it drains the attacker's paced calls): a SIGKILL then lost the profile.
  const stopGraceMs = flags.some((flag) => flag.startsWith('--cpu-prof')) ? PROFILED_STOP_GRACE_MS : STOP_GRACE_MS;
  const child = options.executable
    ? spawn(options.executable, options.args ?? [], {
        cwd: ROOT,
        env: { ...process.env, ...options.env },
        stdio: ['ignore', options.stdout ?? 'ignore', 'pipe'],
      })
    : spawn(
        options.prefix?.[0] ?? process.execPath,
        [...(options.prefix?.length ? [...options.prefix.slice(1), process.execPath] : []), ...flags, script, ...(options.args ?? [])],
        {
          cwd: ROOT,
          env: { ...process.env, ...options.env },
          stdio: ['ignore', options.stdout ?? 'ignore', 'pipe', 'ipc'],
        },
      );
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    stderr = (stderr + text).slice(-4000);
    if (process.env.BENCH_DEBUG) process.stderr.write(`[${name}] ${text}`);
  });
  const pending = new Map<string, (message: Record<string, unknown>) => void>();
  let ready: Record<string, unknown> = {};
  const readyPromise = new Promise<void>((resolve, reject) => {
    const timer = options.waitReady
      ? setTimeout(() => reject(new Error(`${name} did not report ready in time\n${stderr}`)), options.readyTimeoutMs ?? 30_000)
      : undefined;
    child.on('message', (message: Record<string, unknown>) => {
      if (message.type === 'ready') {
        ready = message;
        clearTimeout(timer);
        resolve();
        return;
      }
      const waiter = pending.get(String(message.type));
      pending.delete(String(message.type));
      waiter?.(message);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited early (code ${code}, signal ${signal})\n${stderr}`));
    });
    if (!options.waitReady) resolve();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await readyPromise;
  return {
    name,
    pid: child.pid!,
    process: child,
    ready,
    ask<T>(type: string, timeoutMs = 10_000): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no answer to ${type}`)), timeoutMs);
        pending.set(type, (message) => {
          clearTimeout(timer);
          resolve(message as T);
        });
        child.send({ type });
      });
    },
    rss() {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
        return kb ? Number(kb) * 1024 : 0;
      } catch {
        return 0;
      }
    },
    cpuMs() {
      return processTreeCpuMs(child.pid!);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopGraceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** CPU time (user + system) of a process so far, in ms (clock ticks of 10 ms); 0 once it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU time of a process and its descendants (a peer's worker processes), in ms. */
export function processTreeCpuMs(pid: number): number {
  let total = processCpuMs(pid);
  let children: string[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    // Gone, or a kernel without the children file: the process alone.
  }
  for (const child of children) total += processTreeCpuMs(Number(child));
  return total;
}

/** A free loopback TCP port (bound and released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns true; throws after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export { reportReady } from './ready.mjs';

/**
 * Builds dist/ when a source is newer than the last build (what `npm start` does first): the bench
 * runs the compiled gateway (bench/servers/gateway.mjs). Nothing to do, in a few milliseconds, when
 * it is fresh.
 */
export function ensureBuilt(): void {
  const run = spawnSync(process.execPath, [`${ROOT}scripts/build.mjs`, '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm run build failed:\n${(run.stdout + run.stderr).slice(-2000)}`);
}
