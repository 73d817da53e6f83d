import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { LaunchConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { runnableModule } from '../modules.js';

/**
 * Node arguments that run `module`: compiled JavaScript directly; TypeScript (the examples when the
 * gateway runs from its sources, or a custom service) through tsx's loader, a dev dependency.
 */
function nodeArgs(module: string): string[] {
  if (!module.endsWith('.ts')) return [module];
  let loader: string;
  try {
    loader = createRequire(import.meta.url).resolve('tsx');
  } catch {
    throw new Error(`${module} is TypeScript and tsx is not installed: run \`npm run build\` and start the compiled gateway, or install dev dependencies`);
  }
  return ['--import', loader, module];
}

export interface LaunchedServices {
  stop(): Promise<void>;
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
export function launchServices(entries: readonly LaunchConfig[], grpcAddress: string, log: Logger): LaunchedServices {
  const children = new Set<ChildProcess>();
  let stopping = false;

  const start = (entry: LaunchConfig, restarts: number) => {
    let args: string[];
    try {
      args = nodeArgs(runnableModule(entry.module));
    } catch (err) {
      log.error({ service: entry.name }, `example service '${entry.name}' not started: ${(err as Error).message}`);
      return;
    }
    const child = spawn(process.execPath, args, {
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
      continue;
    }
    start(entry, 0);
  }

  return {
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
