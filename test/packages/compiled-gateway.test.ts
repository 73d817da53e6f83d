/**
 * The compiled gateway (`npm run build`, then `node dist/core/bin/start.js`, which is what `npm start`
 * runs): it boots from dist/ without tsx on its command line, finds its built plugins and custom
 * plugins named in the config, reads its schemas and gate.proto from dist/, and launches an example
 * service as compiled JavaScript (the config names it by its .ts path, as the demo config does).
 * TypeScript plugins work as docs/plugins.md says: the repository's recipe
 * (examples/configs/custom-plugin.yaml, run as its comment says), and a plugin in a folder outside
 * the repository, loaded through tsx and sharing the gateway's compiled core (its catalog error
 * renders as one); so does a TypeScript model service launched from a folder outside it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCommand } from '../../scripts/start-command.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'compiled-test-key-000000000001';
const ECHO_TOKEN = 'compiled-echo-token-0001';
const OUTSIDE_TOKEN = 'compiled-outside-token-0001';

const config = (dist: string, outsidePlugin: string, outsideService: string) => `
server: { host: 127.0.0.1, httpPort: 0, grpcPort: 0 }
store: { kind: memory }
accounts: [{ id: 1, name: demo }]
apiKeys: [{ name: k, account: demo, key: ${KEY}, permissions: [MODEL_REQUESTS, READ_DATA] }]
services:
  - { id: 1, name: echo, account: demo, public: true, connectionTokens: [{ token: ${ECHO_TOKEN} }] }
  - { id: 2, name: outside, account: demo, public: true, connectionTokens: [{ token: ${OUTSIDE_TOKEN} }] }
plugins:
  enabled: [health, sync-predict, console]
  custom: [{ path: ${join(dist, 'examples/custom-plugin/index.ts')} }, { path: ${outsidePlugin} }]
launch:
  - { name: echo, module: ${join(dist, 'examples/echo-service/main.ts')}, env: { PLATFORM_SERVICE_TOKEN: ${ECHO_TOKEN} } }
  - { name: outside, module: ${outsideService}, env: { PLATFORM_SERVICE_TOKEN: ${OUTSIDE_TOKEN} } }
`;

/** A user's plugin in TypeScript, outside the repository: type annotations, a helper of its own, the plugin API by path. */
const OUTSIDE_PLUGIN = `
import { definePlugin, gatewayError } from '${join(ROOT, 'core/plugins/index.js')}';
import { greet } from './greet.js';

export default definePlugin<{ name?: string }>({
  name: 'outside',
  routes(router) {
    router.get('/api/outside/hello', (koa) => {
      koa.body = { text: greet('outside') };
    });
    router.get('/api/outside/refuse', () => {
      throw gatewayError('VALIDATION_FAILED', { param: 'who', args: { reason: 'refused by a plugin outside the repository' } });
    });
  },
});
`;
/** A user's model service in TypeScript, outside the repository, launched by the gateway (through tsx). */
const OUTSIDE_SERVICE = `
import { serveModel, type PredictRequest } from '${join(ROOT, 'sdk/index.js')}';

const prefix: string = 'outside says ';
const service = serveModel({ predict: (req: PredictRequest) => ({ said: prefix + req.data.json<{ text: string }>().text }) }, { descriptor: { name: 'outside' } });
await service.ready();
process.once('SIGTERM', () => void service.stop().then(() => process.exit(0)));
`;
const OUTSIDE_HELPER = 'export const greet = (who: string): string => `hello from ${who}`;\n';

/** Starts the compiled gateway as `npm start` runs it; resolves with its HTTP address once the banner is out. */
function startCompiled(env: Record<string, string>, onOutput: (text: string) => void): { child: ChildProcess; httpUrl: Promise<string> } {
  let output = '';
  // No tsx on the command line: plain node on the compiled entry point, with npm start's flags.
  const { nodeFlags, entry } = startCommand();
  const child = spawn(process.execPath, [...nodeFlags, entry], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const httpUrl = new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the compiled gateway exited with ${code}:\n${output}`)));
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      onOutput(output);
      const url = /Gateway ready: HTTP\s+(http:\/\/[^\s,]+)/.exec(output)?.[1];
      if (url) resolve(url);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
  });
  return { child, httpUrl };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe('the compiled gateway (dist/)', () => {
  // realpath: os.tmpdir() may be a symlink.
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'compiled-gateway-')));
  let gateway: ChildProcess | undefined;
  let httpUrl = '';
  let output = '';

  beforeAll(async () => {
    expect(work.startsWith(ROOT)).toBe(false);
    await promisify(execFile)(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT });
    const outside = join(work, 'my-plugins');
    mkdirSync(outside);
    writeFileSync(join(outside, 'index.ts'), OUTSIDE_PLUGIN);
    writeFileSync(join(outside, 'greet.ts'), OUTSIDE_HELPER);
    const configPath = join(work, 'gateway.yaml');
    writeFileSync(join(outside, 'service.ts'), OUTSIDE_SERVICE);
    writeFileSync(configPath, config(join(ROOT, 'dist'), join(outside, 'index.ts'), join(outside, 'service.ts')));
    const started = startCompiled({ GATEWAY_CONFIG: configPath }, (text) => {
      output = text;
    });
    gateway = started.child;
    httpUrl = await started.httpUrl;
  }, 300_000);

  afterAll(async () => {
    await stop(gateway);
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

  it('serves the console that npm run build wrote beside its compiled plugin', async () => {
    const page = await fetch(`${httpUrl}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const script = /src="(\/console\/assets\/app-[A-Z0-9]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    expect((await fetch(`${httpUrl}${script!}`)).status).toBe(200);
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

  it('launches a TypeScript model service from a folder outside the repository', async () => {
    expect(output).toMatch(/Services connected: .*demo\/outside/);
    const answer = await fetch(`${httpUrl}/api/platformgate/account/demo/model/outside/predict`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'hi' }),
    });
    expect(await answer.json(), output).toEqual({ said: 'outside says hi' });
  });

  it("loads a TypeScript plugin from a folder outside the repository, which shares the gateway's core", async () => {
    const hello = await fetch(`${httpUrl}/api/outside/hello`);
    expect(await hello.json(), output).toEqual({ text: 'hello from outside' });
    // Its gatewayError is the compiled gateway's own: rendered as a catalog error, not an internal 500.
    const refused = await fetch(`${httpUrl}/api/outside/refuse`);
    expect(await refused.json()).toMatchObject({
      error: { code: 'VALIDATION_FAILED', param: 'who', message: 'Invalid request: refused by a plugin outside the repository' },
    });
    expect(refused.status).toBe(400);
  });
});

describe('the custom-plugin recipe under the compiled gateway', () => {
  let gateway: ChildProcess | undefined;
  let output = '';
  afterAll(() => stop(gateway));

  it(
    'runs as examples/configs/custom-plugin.yaml says (GATEWAY_CONFIG=examples/configs/custom-plugin.yaml npm start)',
    { timeout: 300_000 },
    async () => {
      await promisify(execFile)(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT });
      // Ports 0: the recipe's 8080 and 9090 may be taken on a shared machine.
      const started = startCompiled({ GATEWAY_CONFIG: 'examples/configs/custom-plugin.yaml', HTTP_PORT: '0', GRPC_PORT: '0' }, (text) => {
        output = text;
      });
      gateway = started.child;
      const httpUrl = await started.httpUrl;
      expect(output).toContain('Services connected:  acme/upper');
      const answer = await fetch(`${httpUrl}/api/custom/shout/acme/upper`, {
        method: 'POST',
        headers: { 'PLATFORM-API-KEY': 'acme-api-key-0123456789', 'Content-Type': 'application/json' },
        body: JSON.stringify({ text: 'hello' }),
      });
      expect(await answer.json(), output).toEqual({ greeting: 'HEY', answer: { upper: 'HELLO' } });
    },
  );
});
