/**
 * A service program started with a connection token no gateway knows (a typo in
 * PLATFORM_SERVICE_TOKEN): one clear error line, exit status 78 (EX_CONFIG, which the launcher does
 * not restart), no "reconnecting" line and no unhandled rejection's stack from `await service.ready()`.
 * The program is the demo's upper-case service, run as a user runs it, against a real gateway.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/python.js';
import { startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';

describe('a service program with a wrong connection token', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['health'] } }));
  });
  afterAll(() => gw.close());

  it('ends with one clear error line and status 78', { timeout: 60_000 }, async () => {
    const child = spawn(
      process.execPath,
      ['--import', createRequire(import.meta.url).resolve('tsx'), join(repoRoot, 'examples/upper-service/main.ts')],
      {
        env: { ...process.env, PLATFORM_GRPC_HOST: gw.grpcAddress, PLATFORM_SERVICE_TOKEN: 'not-a-known-token-0000' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = output.split('\n').filter(Boolean);
    expect(lines, output).toHaveLength(1);
    expect(lines[0]).toContain(`gateway ${gw.grpcAddress} refused this service's connection token`);
    expect(lines[0]).toContain('check PLATFORM_SERVICE_TOKEN');
    expect(code, output).toBe(78);
  });
});
