/**
 * The compiled gateway (`npm run build`, then `node dist/core/bin/start.js`, which is what `npm start`
 * runs): it boots from dist/ without tsx, finds its built plugins and a custom plugin named in the
 * config, reads its schemas and gate.proto from dist/, and launches an example service as compiled
 * JavaScript (the config names it by its .ts path, as the demo config does).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'compiled-test-key-000000000001';
const ECHO_TOKEN = 'compiled-echo-token-0001';

const config = (dist: string) => `
server: { host: 127.0.0.1, httpPort: 0, grpcPort: 0 }
store: { kind: memory }
accounts: [{ id: 1, name: demo }]
apiKeys: [{ name: k, account: demo, key: ${KEY}, permissions: [MODEL_REQUESTS, READ_DATA] }]
services:
  - { id: 1, name: echo, account: demo, public: true, connectionTokens: [{ token: ${ECHO_TOKEN} }] }
plugins:
  enabled: [health, sync-predict]
  custom: [{ path: ${join(dist, 'examples/custom-plugin/index.ts')} }]
launch:
  - { name: echo, module: ${join(dist, 'examples/echo-service/main.ts')}, env: { PLATFORM_SERVICE_TOKEN: ${ECHO_TOKEN} } }
`;

describe('the compiled gateway (dist/)', () => {
  const work = mkdtempSync(join(tmpdir(), 'compiled-gateway-'));
  let gateway: ChildProcess | undefined;
  let httpUrl = '';
  let output = '';

  beforeAll(async () => {
    await promisify(execFile)(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT });
    const configPath = join(work, 'gateway.yaml');
    writeFileSync(configPath, config(join(ROOT, 'dist')));
    // No tsx anywhere: plain node on the compiled entry point, as `npm start` runs it.
    gateway = spawn(process.execPath, ['dist/core/bin/start.js'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_CONFIG: configPath, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    gateway.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    httpUrl = await new Promise<string>((resolve, reject) => {
      gateway!.once('exit', (code) => reject(new Error(`the compiled gateway exited with ${code}:\n${output}`)));
      gateway!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const url = /HTTP\s+(http:\/\/[^\s,]+)/.exec(output)?.[1];
        if (url) resolve(url);
      });
    });
  }, 300_000);

  afterAll(async () => {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((resolve) => gateway!.once('exit', resolve));
      gateway.kill('SIGTERM');
      await exited;
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('serves its built plugins and the compiled example service', { timeout: 90_000 }, async () => {
    expect((await fetch(`${httpUrl}/health`)).status).toBe(200);
    // The echo service connects once its process has started: until then, NO_ACTIVE_INSTANCES.
    const deadline = Date.now() + 60_000;
    let status = 0;
    let body = '';
    do {
      const answer = await fetch(`${httpUrl}/api/platformgate/account/demo/model/echo/predict`, {
        method: 'POST',
        headers: { 'PLATFORM-API-KEY': KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'built' }] }),
      });
      [status, body] = [answer.status, await answer.text()];
      if (!body.includes('NO_ACTIVE_INSTANCES')) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    } while (Date.now() < deadline);
    expect(status, `${body}\n${output}`).toBe(200);
    expect(body).toContain('built');
  });

  it('loads a custom plugin named by its .ts path from its compiled .js', async () => {
    const res = await fetch(`${httpUrl}/api/custom/shout/demo/echo`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'quiet' }),
    });
    // The route exists (no NOT_FOUND) and reached the echo service, which refuses `{text}` as not chat data.
    expect(await res.json(), output).toMatchObject({ error: { code: 'platform-action.common.bad-request' } });
    expect(res.status).toBe(400);
  });
});
