import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docFiles, extractExamples, shellScript, withPorts, type DocExample } from '../support/doc-examples.js';
import { underCi } from '../support/prerequisites.js';
import { repoRoot } from '../support/python.js';
import { freePort } from '../support/ports.js';

/**
 * Every ```sh, ```ts and ```python example of README.md and docs/ runs against a started demo
 * (`npm start`), in file order; a failure names the file and line of the example. The convention is
 * in test/support/doc-examples.ts.
 */
const TSX_LOADER = createRequire(import.meta.url).resolve('tsx');
const BLOCK_TIMEOUT_MS = 90_000;
const onPath = (tool: string) => spawnSync('sh', ['-c', `command -v ${JSON.stringify(tool)}`]).status === 0;

/** A folder that looks like the repository root (links to its entries) but keeps what examples write. */
function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'doc-examples-'));
  for (const name of readdirSync(repoRoot)) {
    if (name !== '.git' && name !== '.tmp' && name !== '.data') symlinkSync(join(repoRoot, name), join(dir, name));
  }
  mkdirSync(join(dir, '.data'));
  return dir;
}

interface Run { code: number | null; output: string }

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    // Its own process group: whatever an example leaves running in the background is stopped with it.
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-8000); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => { output += `\n[timed out after ${BLOCK_TIMEOUT_MS} ms]`; killGroup(child); }, BLOCK_TIMEOUT_MS);
    // 'exit', not 'close': a process an example left in the background may hold the pipes open.
    child.on('exit', (code) => {
      clearTimeout(timer);
      killGroup(child);
      setTimeout(() => resolve({ code, output }), 50);
    });
  });
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

// DOCS_EXAMPLES=docs/fitting.md (comma-separated) runs only those files' examples, while writing them.
const only = process.env.DOCS_EXAMPLES?.split(',').filter(Boolean);
const all = docFiles(repoRoot)
  .filter((file) => !only || only.some((o) => file.includes(o)))
  .map((file) => ({ file, examples: extractExamples(repoRoot, file) }));
const files = all.map((f) => ({ ...f, examples: f.examples.filter((e) => !e.noRun) })).filter((f) => f.examples.length);
const runnable = files.flatMap((f) => f.examples);
const shown = all.flatMap((f) => f.examples).length;

describe('docs examples run against the demo', () => {
  let demo: ChildProcess | undefined;
  let demoOutput = '';
  let httpPort = 0;
  let grpcPort = 0;

  beforeAll(async () => {
    [httpPort, grpcPort] = [await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = { ...process.env, HTTP_PORT: String(httpPort), GRPC_PORT: String(grpcPort), LOG_FORMAT: 'json', LOG_LEVEL: 'warn' };
    delete env.GATEWAY_CONFIG; // the demo, as `npm start` runs it
    delete env.MONGODB_URI;
    demo = spawn(process.execPath, ['--import', TSX_LOADER, 'core/bin/start.ts'], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    demo.stdout!.on('data', (c: Buffer) => { demoOutput += c.toString(); });
    demo.stderr!.on('data', (c: Buffer) => { demoOutput += c.toString(); });
    // The banner comes once the launched services are connected (or have given up).
    const deadline = Date.now() + 170_000;
    while (!demoOutput.includes('Gateway ready')) {
      if (demo.exitCode !== null || Date.now() > deadline) throw new Error(`the demo did not start:\n${demoOutput.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    process.stderr.write(`docs examples: ${runnable.length} of ${shown} examples (the rest are no-run) in ${files.length} files run against the demo\n`);
  }, 180_000);

  afterAll(async () => {
    if (!demo || demo.exitCode !== null) return;
    const exited = new Promise((r) => demo!.once('exit', r));
    demo.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (demo.exitCode === null) demo.kill('SIGKILL');
  }, 20_000);

  for (const { file, examples } of files) {
    describe(file, () => {
      let dir = '';
      beforeAll(() => { dir = workDir(); });
      afterAll(() => rmSync(dir, { recursive: true, force: true }));

      for (const example of examples) {
        const name = `${example.file}:${example.line} (${example.language})`;
        it(name, async () => {
          const missing = [...example.needs, ...example.optional].filter((tool) => !onPath(tool));
          if (missing.length) {
            const required = example.needs.filter((tool) => missing.includes(tool));
            const line = `SKIPPED example ${name}: ${missing.join(', ')} not installed`;
            if (required.length && underCi()) throw new Error(`${line} (CI=true: .ci/run installs it)`);
            process.stderr.write(`\n*** ${line} ***\n`);
            return;
          }
          const result = await runExample(example, dir, httpPort, grpcPort);
          expect(result.code, `${name} failed (exit ${result.code}):\n${result.output}\n--- the demo's last output:\n${demoOutput.slice(-1500)}`).toBe(0);
        }, BLOCK_TIMEOUT_MS + 5_000);
      }
    });
  }
});

function runExample(example: DocExample, dir: string, httpPort: number, grpcPort: number): Promise<Run> {
  const code = withPorts(example.code, httpPort, grpcPort);
  if (example.saveAs) {
    writeFileSync(join(dir, example.saveAs), code);
    return Promise.resolve({ code: 0, output: '' });
  }
  const env = { ...process.env, PATH: `${join(repoRoot, '.venv', 'bin')}:${join(repoRoot, 'node_modules', '.bin')}:${process.env.PATH}` };
  if (example.language === 'sh') {
    const script = shellScript(example, code, join(dir, '.example-state'));
    return run('bash', ['-c', script], dir, env);
  }
  const path = join(dir, `example-${example.line}.${example.language === 'ts' ? 'ts' : 'py'}`);
  writeFileSync(path, code);
  return example.language === 'ts'
    ? run(process.execPath, ['--import', TSX_LOADER, path], dir, env)
    : run('python3', [path], dir, env);
}
