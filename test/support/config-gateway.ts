/**
 * A real gateway process on a config file, as `npm start` runs one with GATEWAY_CONFIG (under tsx),
 * for tests that kill it with SIGKILL and start it again on the same config and store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');

/**
 * Starts `core/bin/start.ts` on `configPath` and resolves once it printed that it is ready; its
 * output goes into `output` (for the failure message of a later step). MONGODB_URI of the
 * environment is dropped (CI exports one, and it would move the default store to MongoDB) unless
 * `mongodbUri` names the one to use.
 */
export async function startConfigGateway(configPath: string, output: string[], mongodbUri?: string): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: 'warn' };
  delete env.MONGODB_URI;
  if (mongodbUri) env.MONGODB_URI = mongodbUri;
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/bin/start.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`gateway did not start:\n${output.join('')}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output.push(chunk.toString('utf8'));
      if (output.join('').includes('Gateway ready')) {
        clearTimeout(timer);
        ready();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`gateway exited (${String(code)}) before it was ready:\n${output.join('')}`));
    });
  });
  child.removeAllListeners('exit');
  return child;
}

/** SIGKILL, as a crash: resolves once the process is gone. */
export async function killHard(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGKILL');
  await exited;
}
