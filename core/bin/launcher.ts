import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { LaunchConfig } from '../config/types.js';
import type { Logger } from '../logger.js';

const require = createRequire(import.meta.url);
/** tsx's loader, so launched services may be TypeScript files like the examples. */
const TSX_LOADER = require.resolve('tsx');

export interface LaunchedServices {
  /** The process IDs of the services running now. */
  pids(): number[];
  stop(): Promise<void>;
}

/** What the launcher tells about each entry: started (its service should be connected), or given up. */
export interface LaunchEvents {
  started?(entry: LaunchConfig): void;
  skipped?(entry: LaunchConfig): void;
}

/**
 * Exit status (sysexits EX_CONFIG) of a service that found a prerequisite missing that `requires`
 * cannot express, such as a Python module: restarting it would not help.
 */
const EX_CONFIG = 78;

const onPath = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${JSON.stringify(command)}`]).status === 0;

/**
 * Starts the configured example services as child processes that connect back over gRPC, like any
 * outside service would. A service whose engine is missing is skipped with a message; one that
 * exits is restarted after a pause (bounded, so a broken one does not spin).
 */
export function launchServices(entries: readonly LaunchConfig[], grpcAddress: string, log: Logger, events: LaunchEvents = {}): LaunchedServices {
  const children = new Set<ChildProcess>();
  let stopping = false;

  const start = (entry: LaunchConfig, restarts: number) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, entry.module], {
      env: { ...process.env, PLATFORM_GRPC_HOST: grpcAddress, PLATFORM_GRPC_SECURE: 'false', ...entry.env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.add(child);
    log.info({ service: entry.name, pid: child.pid }, 'example service started');
    child.on('exit', (code, signal) => {
      children.delete(child);
      if (stopping) return;
      if (code === EX_CONFIG) {
        log.warn({ service: entry.name, code }, `example service '${entry.name}' not started: a prerequisite is missing (see its message above)`);
        events.skipped?.(entry);
        return;
      }
      log.warn({ service: entry.name, code, signal }, 'example service exited');
      if (restarts < 5) setTimeout(() => start(entry, restarts + 1), 1000 * (restarts + 1)).unref();
    });
  };

  for (const entry of entries) {
    const missing = entry.requires.filter((command) => !onPath(command));
    if (missing.length) {
      log.warn({ service: entry.name, missing }, `example service '${entry.name}' not started: ${missing.join(', ')} not installed`);
      events.skipped?.(entry);
      continue;
    }
    start(entry, 0);
    events.started?.(entry);
  }

  return {
    pids: () => [...children].map((child) => child.pid).filter((pid): pid is number => pid !== undefined),
    async stop() {
      stopping = true;
      await Promise.all([...children].map((child) => new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      })));
    },
  };
}
