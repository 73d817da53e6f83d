import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const TSX = createRequire(import.meta.url).resolve('tsx');
const ENTRY = fileURLToPath(new URL('./gateway-process.ts', import.meta.url));

export interface GatewayProcess {
  httpUrl: string;
  stop(): Promise<void>;
}

/** Starts test/ops/support/gateway-process.ts with `config`; resolves once it listens. */
export function spawnGateway(config: Record<string, unknown>): Promise<GatewayProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', TSX, ENTRY], {
    env: { ...process.env, GATEWAY_TEST_CONFIG: JSON.stringify(config) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('gateway process did not start in 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`gateway process exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      const { httpUrl } = JSON.parse(line) as { httpUrl: string };
      resolve({
        httpUrl,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.stdin!.end();
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      });
    });
  });
}
