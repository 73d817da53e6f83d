import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { bannerLines } from '../../core/bin/banner.js';
import { heapFlagsOf, launchServices, type LaunchedServices } from '../../core/bin/launcher.js';
import { createLogger } from '../../core/observe/logger.js';
import { eventually } from '../support/gateway.js';

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _e, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

function script(body: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'launch-')), 'service.mjs');
  writeFileSync(file, body);
  return file;
}

/** `launch[]` of the config: what npm start runs next to the gateway. */
describe('launched services', () => {
  let launched: LaunchedServices | undefined;
  afterEach(async () => {
    await launched?.stop();
    launched = undefined;
  });

  it('prefixes each line a service writes with its name', async () => {
    const out = sink();
    const module = script("console.log('hello'); console.log('second line'); setInterval(() => {}, 1000);");
    launched = launchServices(
      [{ name: 'chatty', module, env: {}, requires: [], optional: false }],
      '127.0.0.1:1',
      createLogger({ destination: sink().stream }),
      { stdout: out.stream },
    );
    await eventually(() => out.text().includes('second line'), 10_000, 'the output');
    expect(out.text()).toBe('chatty | hello\nchatty | second line\n');
  });

  it("runs each service with the gateway's heap flags, and none of its other flags", async () => {
    const out = sink();
    const module = script('console.log(JSON.stringify(process.execArgv)); setInterval(() => {}, 1000);');
    const gatewayFlags = ['--inspect=0', '--initial-old-space-size=96', '--cpu-prof', '--max-semi-space-size=4'];
    launched = launchServices(
      [{ name: 'sized', module, env: {}, requires: [], optional: false }],
      '127.0.0.1:1',
      createLogger({ destination: sink().stream }),
      { stdout: out.stream, heapFlags: heapFlagsOf(gatewayFlags) },
    );
    await eventually(() => out.text().includes(']'), 10_000, 'the flags');
    expect(out.text()).toBe('sized | ["--initial-old-space-size=96","--max-semi-space-size=4"]\n');
  });

  it("reports a crash loop once, with the last output, instead of every restart's trace", async () => {
    const err = sink();
    const log = sink();
    const module = script("console.error('Error: boom'); console.error('    at somewhere'); process.exit(3);");
    launched = launchServices(
      [{ name: 'crasher', module, env: {}, requires: [], optional: false }],
      '127.0.0.1:1',
      createLogger({ destination: log.stream }),
      {
        stderr: err.stream,
        maxRestarts: 3,
        restartDelayMs: () => 10,
      },
    );
    await eventually(() => launched!.states().get('crasher')?.state === 'failed', 20_000, 'the launcher to give up');
    // The first run's output is shown live; the three restarts are quiet.
    expect(err.text().match(/crasher \| Error: boom/g)).toHaveLength(1);
    const lines = log
      .text()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.filter((l) => l.msg.includes('exited with code 3; restarting'))).toHaveLength(1);
    const gaveUp = lines.filter((l) => l.msg.includes('keeps crashing'));
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]!.msg).toContain('exited 4 times, last with code 3');
    expect(gaveUp[0]!.msg).toContain('Error: boom');
    expect(launched.states().get('crasher')).toEqual({ state: 'failed', reason: 'exited 4 times, last with code 3' });
  });

  it('skips an optional service whose module is missing, saying which, and starts the others', async () => {
    const out = sink();
    const module = script("console.log('up'); setInterval(() => {}, 1000);");
    const skipped: string[] = [];
    launched = launchServices(
      [
        { name: 'extra', module: '/nowhere/main.ts', env: {}, requires: [], optional: true },
        { name: 'present', module, env: {}, requires: [], optional: false },
      ],
      '127.0.0.1:1',
      createLogger({ destination: sink().stream }),
      { stdout: out.stream, skipped: (entry) => skipped.push(entry.name) },
    );
    expect(launched.states().get('extra')).toEqual({ state: 'skipped', reason: 'its module /nowhere/main.ts does not exist' });
    expect(skipped).toEqual(['extra']);
    await eventually(() => out.text().includes('present | up'), 10_000, 'the other service');
  });

  it('does not restart services that exit while the gateway shuts down (Ctrl+C signals them too)', async () => {
    const log = sink();
    const module = script("process.on('SIGINT', () => process.exit(130)); console.log('up'); setInterval(() => {}, 1000);");
    const out = sink();
    launched = launchServices(
      [{ name: 'svc', module, env: {}, requires: [], optional: false }],
      '127.0.0.1:1',
      createLogger({ destination: log.stream }),
      { stdout: out.stream, restartDelayMs: () => 10 },
    );
    await eventually(() => out.text().includes('svc | up'), 10_000, 'the service to start');
    const [pid] = launched.pids();
    launched.shuttingDown();
    process.kill(pid!, 'SIGINT');
    await eventually(() => launched!.pids().length === 0, 10_000, 'the service to exit');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(launched.pids()).toEqual([]);
    expect(log.text()).not.toContain('restarting');
  });

  it('skips a service whose engine is not installed, saying which', () => {
    launched = launchServices(
      [{ name: 'engine', module: '/nowhere.mjs', env: {}, requires: ['no-such-engine-xyz'], optional: false }],
      '127.0.0.1:1',
      createLogger({ destination: sink().stream }),
    );
    expect(launched.states().get('engine')).toEqual({ state: 'skipped', reason: 'no-such-engine-xyz not installed' });
  });
});

describe('the start-up banner', () => {
  const input = {
    httpUrl: 'http://127.0.0.1:8080',
    grpcAddress: '127.0.0.1:9090',
    configPath: 'examples/demo/gateway.yaml',
    storeKind: 'memory',
  };

  it('gives the demo key and a Try: line once services are connected', () => {
    const text = bannerLines({
      ...input,
      demo: { apiKey: 'k-0123456789abcdef', serviceToken: 't', metricsToken: 'm-0123456789abcdef' },
      launch: { connected: ['demo/echo'], connecting: [], notStarted: [] },
    }).join('\n');
    expect(text).toContain('Gateway ready: HTTP http://127.0.0.1:8080, gRPC 127.0.0.1:9090');
    expect(text).toContain('Metrics token:       m-0123456789abcdef');
    expect(text).toContain('Services connected:  demo/echo');
    expect(text).toContain(
      "Try: curl -s http://127.0.0.1:8080/api/adapters/chatapi/v1/chat/completions -H 'Authorization: Bearer k-0123456789abcdef'",
    );
    expect(text).not.toContain('Still connecting');
  });

  it('gives the console URL and the demo sign-in', () => {
    const text = bannerLines({
      ...input,
      demo: { apiKey: 'k', serviceToken: 't', signIn: { email: 'demo@example.com', password: 'demo-password-123' } },
      launch: { connected: [], connecting: [], notStarted: [] },
    }).join('\n');
    expect(text).toContain('Console:             http://127.0.0.1:8080/console   (sign in as demo@example.com / demo-password-123;');
  });

  it('says which services are still connecting or were not started', () => {
    const text = bannerLines({
      ...input,
      launch: { connected: [], connecting: ['demo/asr'], notStarted: ['demo/tts (espeak-ng not installed)'] },
    }).join('\n');
    expect(text).toContain('Still connecting:    demo/asr');
    // What each interface answers meanwhile: the chat adapters' SDKs retry a 503, never the platform API's 400.
    expect(text).toContain('until then the platform API answers 400 NO_ACTIVE_INSTANCES and the chat adapters 503 with Retry-After');
    expect(text).toContain('Not started:         demo/tts (espeak-ng not installed)');
    expect(text).not.toContain('Try:');
  });
});
