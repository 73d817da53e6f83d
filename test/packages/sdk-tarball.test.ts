/**
 * The SDK as a user gets it: `npm pack` the protocol and SDK packages, install the tarballs into an
 * empty folder outside the repository (so neither its sources nor its node_modules can be reached),
 * type-check a model service written against the installed types, then run it against a real
 * gateway: it registers, answers predict over HTTP and gRPC, and streams.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GateClient } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SERVICE_SOURCE = `
import { ServiceError, serveModel, type PredictRequest } from '@model-gateway/sdk';

const service = serveModel(
  {
    predict(req: PredictRequest) {
      const { text, n } = req.data.json<{ text?: string; n?: number }>();
      if (n) return (async function* () { for (let i = 0; i < n; i++) yield { i }; })();
      if (!text) throw ServiceError.badRequest('text is empty');
      return { upper: text.toUpperCase() };
    },
  },
  { descriptor: { name: 'packed-echo' } },
);
await service.ready();
process.stdout.write('ready\\n');
process.once('SIGTERM', () => void service.stop().then(() => process.exit(0)));
`;

/** Runs a command without blocking the test worker (npm pack and install take a while). */
async function run(command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, {
      cwd,
      env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
    });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

describe('the SDK installed from its npm tarball', () => {
  // realpath: os.tmpdir() may be a symlink; the checks below compare real paths.
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'sdk-tarball-')));
  const app = join(work, 'app');
  let gw: TestGateway | undefined;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    expect(work.startsWith(ROOT)).toBe(false);
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    mkdirSync(app);
    // The packages' prepack runs their build; the repo's build (one at a time, shared with the other
    // test files) makes the same dist/ folders, so it runs here and pack skips the scripts.
    await run(process.execPath, ['scripts/build.mjs', '--if-stale'], ROOT);
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', tarballs, '--workspace', 'proto', '--workspace', 'sdk'], ROOT);
    const packed = readdirSync(tarballs).map((name) => join(tarballs, name));
    expect(packed.map((p) => p.slice(tarballs.length + 1)).sort()).toEqual([
      'model-gateway-protocol-0.1.0.tgz',
      'model-gateway-sdk-0.1.0.tgz',
    ]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'packed-service', private: true, type: 'module' }));
    await run('npm', ['install', '--prefer-offline', '--no-package-lock', ...packed, '@types/node@20', 'typescript@5'], app);
    writeFileSync(join(app, 'service.ts'), SERVICE_SOURCE);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          outDir: 'out',
          types: ['node'],
          skipLibCheck: true,
        },
        files: ['service.ts'],
      }),
    );
  }, 240_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    await gw?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('resolves the packages from the install, not from the repository', async () => {
    const where = (
      await run(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('@model-gateway/sdk'))"], app)
    ).trim();
    expect(where).toBe(`file://${join(app, 'node_modules', '@model-gateway', 'sdk', 'dist', 'index.js')}`);
  });

  it('ships types: a service written against them compiles', async () => {
    await run(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], app);
  }, 60_000);

  it('runs a model service that registers, answers predict and streams', async () => {
    gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['sync-predict'] } }));
    child = spawn(process.execPath, [join(app, 'out', 'service.js')], {
      cwd: app,
      env: { ...process.env, PLATFORM_GRPC_HOST: gw.grpcAddress, PLATFORM_SERVICE_TOKEN: ECHO_TOKEN },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child!.once('exit', (code) => reject(new Error(`the packed service exited with ${code}`)));
      child!.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
    });

    const http = await request(gw.httpUrl)
      .post('/api/platformgate/account/demo/model/echo/predict')
      .set('PLATFORM-API-KEY', TEST_KEY)
      .send({ text: 'packed' });
    expect(http.body).toEqual({ upper: 'PACKED' });
    expect(http.status).toBe(200);

    const bad = await request(gw.httpUrl)
      .post('/api/platformgate/account/demo/model/echo/predict')
      .set('PLATFORM-API-KEY', TEST_KEY)
      .send({ text: '' });
    expect(bad.status).toBe(400);

    const client = new GateClient({ address: gw.grpcAddress, authToken: TEST_KEY, account: 'demo', model: 'echo' });
    try {
      const frames: unknown[] = [];
      for await (const frame of client.predictJsonStream({ n: 3 })) frames.push(frame);
      expect(frames).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    } finally {
      client.close();
    }
  });
});
