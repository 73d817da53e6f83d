import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { LaunchConfig } from '../config/types.js';
import type { Logger } from '../observe/logger.js';
import { MODULE_EXTENSION, runnableModule } from '../modules/build-paths.js';

/**
 * Node arguments that run `module`: compiled JavaScript directly; TypeScript (the examples when the
 * gateway runs from its sources, examples/local-llm, a user's service) through tsx's loader, a
 * runtime dependency for user modules, with core/modules/ts-register.ts's hooks (an ES module in any folder).
 */
function nodeArgs(module: string, heapFlags: readonly string[]): string[] {
  if (!module.endsWith('.ts')) return [...heapFlags, module];
  const hooks = new URL(`../modules/ts-register${MODULE_EXTENSION}`, import.meta.url).href;
  return [...heapFlags, '--import', createRequire(import.meta.url).resolve('tsx'), '--import', hooks, module];
}

/**
 * The gateway's own heap sizing flags (`npm start` gives `--initial-old-space-size`): a launched
 * service receives the same large messages, and collects them on the same terms
 * (docs/operations.md, "Memory and garbage collection"). Other flags (`--inspect`, `--cpu-prof`) stay
 * the gateway's own.
 */
export const heapFlagsOf = (execArgv: readonly string[]): string[] =>
  execArgv.filter((flag) => /^--(initial-old-space-size|max-old-space-size|max-semi-space-size)=/.test(flag));

/** What became of one launch entry: running (maybe not connected yet), skipped, or given up on. */
export type LaunchState = { state: 'running' } | { state: 'skipped'; reason: string } | { state: 'failed'; reason: string };

export interface LaunchedServices {
  /** The state of each entry, by launch name. */
  states(): ReadonlyMap<string, LaunchState>;
  /** The process IDs of the services running now. */
  pids(): number[];
  /**
   * The gateway is shutting down: a service that exits from now on is not restarted. Ctrl+C in a
   * terminal signals the services too, while the gateway still drains, before `stop()`.
   */
  shuttingDown(): void;
  stop(): Promise<void>;
}

/** What the launcher tells about each entry: started (its service should be connected), or given up. */
export interface LaunchEvents {
  started?(entry: LaunchConfig): void;
  skipped?(entry: LaunchConfig): void;
}

export interface LaunchOptions extends LaunchEvents {
  /** Where the services' output goes, each line prefixed with the service's name; default: ours. */
  stdout?: Writable;
  stderr?: Writable;
  /** Starts after the first before giving up on a service that keeps exiting. */
  maxRestarts?: number;
  /** Pause before restart n (n = 1, 2, …), in ms. */
  restartDelayMs?: (restart: number) => number;
  /** Node flags of every launched service; default: the gateway's own heap flags (`heapFlagsOf`). */
  heapFlags?: readonly string[];
}

/**
 * Exit status (sysexits EX_CONFIG) of a service that found a prerequisite missing that `requires`
 * cannot express, such as a Python module, or that no gateway accepts (the SDK's serveModel with a
 * wrong connection token): restarting it would not help.
 */
const EX_CONFIG = 78;
/** A restarted service that stays up this long is healthy again: its output is shown live again. */
const HEALTHY_AFTER_MS = 10_000;
/** Lines of a restarted service's output kept for the give-up report. */
const KEPT_LINES = 12;

const onPath = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${JSON.stringify(command)}`]).status === 0;

/**
 * Starts the configured example services as child processes that connect back over gRPC, like any
 * outside service would. Their output is prefixed with their name. A service whose engine is
 * missing is skipped with a message; one that exits is restarted after a pause, a bounded number of
 * times. A crash loop is reported once: the first run's output is shown, restarts are quiet, and
 * giving up prints the last lines the service wrote.
 */
export function launchServices(
  entries: readonly LaunchConfig[],
  grpcAddress: string,
  log: Logger,
  options: LaunchOptions = {},
): LaunchedServices {
  const children = new Set<ChildProcess>();
  const states = new Map<string, LaunchState>();
  const out = options.stdout ?? process.stdout;
  const err = options.stderr ?? process.stderr;
  const maxRestarts = options.maxRestarts ?? 5;
  const restartDelay = options.restartDelayMs ?? ((n: number) => 1000 * n);
  const width = Math.max(0, ...entries.map((e) => e.name.length));
  let stopping = false;

  const start = (entry: LaunchConfig, restarts: number) => {
    let args: string[];
    try {
      args = nodeArgs(runnableModule(entry.module), options.heapFlags ?? heapFlagsOf(process.execArgv));
    } catch (err) {
      log.error({ service: entry.name }, `example service '${entry.name}' not started: ${(err as Error).message}`);
      return;
    }
    const child = spawn(process.execPath, args, {
      env: { ...process.env, PLATFORM_GRPC_HOST: grpcAddress, PLATFORM_GRPC_SECURE: 'false', ...entry.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    states.set(entry.name, { state: 'running' });
    const prefix = `${entry.name.padEnd(width)} | `;
    const kept: string[] = [];
    // The first run speaks live; a restart is quiet until it proves healthy (no stream of repeated traces).
    let live = restarts === 0;
    const healthy = setTimeout(() => {
      live = true;
      for (const line of kept.splice(0)) err.write(`${prefix}${line}\n`);
    }, HEALTHY_AFTER_MS);
    healthy.unref();
    const pipe = (stream: Readable, to: Writable) => {
      createInterface({ input: stream }).on('line', (line) => {
        if (live) to.write(`${prefix}${line}\n`);
        else if (kept.push(line) > KEPT_LINES) kept.shift();
      });
    };
    pipe(child.stdout!, out);
    pipe(child.stderr!, err);
    log.debug({ service: entry.name, pid: child.pid }, 'example service started');

    child.on('exit', (code, signal) => {
      children.delete(child);
      clearTimeout(healthy);
      if (stopping) return;
      if (code === EX_CONFIG) {
        const reason = 'a prerequisite is missing or a setting is wrong; its message is above';
        states.set(entry.name, { state: 'skipped', reason });
        log.warn({ service: entry.name, code }, `example service '${entry.name}' not started: ${reason}`);
        options.skipped?.(entry);
        return;
      }
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (restarts >= maxRestarts) {
        const last = kept.length ? kept.join('\n') : "(nothing; its first run's output is above)";
        const reason = `exited ${restarts + 1} times, last with ${how}`;
        states.set(entry.name, { state: 'failed', reason });
        log.error(
          { service: entry.name, code, signal },
          `example service '${entry.name}' keeps crashing (${reason}); gave up. Its last output:\n${last}`,
        );
        return;
      }
      if (restarts === 0)
        log.warn(
          { service: entry.name, code, signal },
          `example service '${entry.name}' exited with ${how}; restarting it quietly (up to ${maxRestarts} times)`,
        );
      setTimeout(() => start(entry, restarts + 1), restartDelay(restarts + 1)).unref();
    });
  };

  const skip = (entry: LaunchConfig, reason: string) => {
    states.set(entry.name, { state: 'skipped', reason });
    log.warn({ service: entry.name }, `example service '${entry.name}' not started: ${reason}`);
    options.skipped?.(entry);
  };
  for (const entry of entries) {
    const missing = entry.requires.filter((command) => !onPath(command));
    if (missing.length) skip(entry, `${missing.join(', ')} not installed`);
    // Only an `optional` entry's module may be missing here: the config refuses a required one's.
    else if (!existsSync(runnableModule(entry.module))) skip(entry, `its module ${entry.module} does not exist`);
    else {
      start(entry, 0);
      options.started?.(entry);
    }
  }

  return {
    states: () => states,
    pids: () => [...children].map((child) => child.pid).filter((pid): pid is number => pid !== undefined),
    shuttingDown() {
      stopping = true;
    },
    async stop() {
      stopping = true;
      await Promise.all(
        [...children].map(
          (child) =>
            new Promise<void>((resolve) => {
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
              setTimeout(() => child.kill('SIGKILL'), 3000).unref();
            }),
        ),
      );
    },
  };
}
