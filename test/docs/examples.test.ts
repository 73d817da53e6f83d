import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  docFiles,
  extractExamples,
  outputMatches,
  pythonModules,
  shellScript,
  withDocsPorts,
  withPorts,
  type DocExample,
} from '../support/doc-examples.js';
import { requirePrerequisite, type Prerequisite } from '../support/prerequisites.js';
import { pythonPrerequisite, repoRoot } from '../support/python.js';
import { freePort } from '../support/ports.js';

/**
 * Every ```sh, ```ts and ```python example of README.md and docs/ runs against the demo started
 * as a user starts it (`npm start`: the compiled gateway, the demo config as shipped), in file
 * order; a failure names the file and line of the example. An example followed by a ```text block
 * must print what the block shows. The examples run in a scratch folder that looks like the
 * repository (what they save stays there). The convention is in test/support/doc-examples.ts.
 */
const TSX_LOADER = createRequire(import.meta.url).resolve('tsx');
const BLOCK_TIMEOUT_MS = 90_000;
/** `npm start` builds first when dist/ is stale (minutes on a busy 2-core machine), then waits for the launched services. */
const DEMO_START_MS = 290_000;
/** A JSON log line of the gateway (pino), as an example that starts one prints it. */
const GATEWAY_LOG_LINE = /^\{"level":\d+,"time":\d+,.*"msg":/;
const onPath = (tool: string) => spawnSync('sh', ['-c', `command -v ${JSON.stringify(tool)}`]).status === 0;

/** How to get each tool the examples name in `needs=`/`optional=` (`bash .ci/run` installs them all). */
const HOW_TO_GET: Record<string, string> = {
  grpcurl: 'go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4',
  'espeak-ng': 'apt-get install espeak-ng',
  sox: 'apt-get install sox',
  jq: 'apt-get install jq',
  pocketsphinx_continuous: 'apt-get install pocketsphinx pocketsphinx-en-us',
};

/**
 * The blocks marked `no-run`, each with why this test cannot run it. A `no-run` block missing here
 * fails the test: `no-run` is not a way to a green run.
 */
const NOT_RUN: { file: string; starts: string; why: string }[] = [
  { file: 'README.md', starts: 'npm test', why: 'runs the test suite, from inside it' },
  {
    file: 'docs/storage.md',
    starts: 'npm run store -- backup',
    why: 'restore needs the gateways stopped, and this test runs against a started demo; test/ops/store-tool.test.ts runs backup and restore as real processes',
  },
  {
    file: 'docs/storage.md',
    starts: 'npm run store -- export',
    why: 'needs a MongoDB server at db.example; test/ops/store-tool.test.ts runs export and import into the MongoDB-wire test server',
  },
  {
    file: 'docs/plugins.md',
    starts: '// /srv/my-plugins/index.ts',
    why: 'a fragment (an import line under a placeholder path); test/packages/compiled-gateway.test.ts runs a plugin outside the repository',
  },
  {
    file: 'docs/configuration.md',
    starts: "MONGODB_URI='mongodb://127.0.0.1:27017/platform' npm start",
    why: 'a second gateway on the demo ports, with a MongoDB server at 27017; test/storage covers the MongoDB store',
  },
  {
    file: 'docs/messages-api.md',
    starts: 'new ModelService({',
    why: 'a fragment of a service (its `answer` is not defined); test/sdk covers the ext method',
  },
  { file: 'docs/speech.md', starts: 'sudo apt-get install', why: 'installs system packages; .ci/run installs them' },
  {
    file: 'docs/speech.md',
    starts: 'PLATFORM_GRPC_HOST=127.0.0.1:9090 PLATFORM_SERVICE_TOKEN=demo-tts-token-0123',
    why: 'starts the speech services the demo has already launched; they run until stopped',
  },
  {
    file: 'docs/benchmarks.md',
    starts: 'npm run bench',
    why: 'the full benchmark takes about 14 minutes; test/bench/smoke.test.ts runs the same harness',
  },
  {
    file: 'docs/fitting.md',
    starts: 'serveModel({',
    why: 'a fragment of a service (its `train` is not defined); examples/text-classifier is the whole service, run by the demo',
  },
  {
    file: 'docs/plugins.md',
    starts: "import { definePlugin, gatewayError } from '../../core/plugins/index.js';",
    why: 'a plugin module, loaded by a gateway, not run as a script',
  },
  {
    file: 'docs/plugins.md',
    starts: 'export default definePlugin<{ retentionDays: number }>({',
    why: 'a fragment of a plugin module (its VisitStore is not defined); test/fixtures/plugins/counter.ts is a whole plugin with create(), run by test/core/plugins.test.ts',
  },
  ...['export ANTHROPIC_BASE_URL', 'GATEWAY_API_KEY=demo-api-key-0123456789 codex exec', 'export GATEWAY_API_KEY'].map((starts) => ({
    file: 'docs/agents.md',
    starts,
    why: 'runs a coding agent from npm; test/agents/coding-agents.test.ts runs these recipes (test/support/coding-agents.ts) against a scripted engine',
  })),
  {
    file: 'docs/agents.md',
    starts: '# llama-cpp-python (what the test runs)',
    why: 'starts a real engine on a downloaded model for minutes; test/agents/coding-agents-llama-cpp.slow.test.ts (npm run test:slow) runs the llama-cpp-python line with these flags',
  },
];

/**
 * A folder that looks like the repository root (links to its tracked entries and build outputs)
 * and keeps what the examples write: a file a user saved in the repository (`my-gateway.yaml`) is
 * not seen, and what the examples save does not land in the repository.
 */
function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'doc-examples-'));
  const tracked = spawnSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' });
  const keep =
    tracked.status === 0
      ? new Set([...tracked.stdout.split('\0').map((path) => path.split('/')[0]!), 'node_modules', 'dist', '.venv'])
      : undefined;
  for (const name of readdirSync(repoRoot)) {
    if (keep ? keep.has(name) : !['.git', '.tmp', '.data'].includes(name)) symlinkSync(join(repoRoot, name), join(dir, name));
  }
  mkdirSync(join(dir, '.data'));
  return dir;
}

interface Run {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    // Its own process group: whatever an example leaves running in the background is stopped with it.
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      output += `\n[timed out after ${BLOCK_TIMEOUT_MS} ms]`;
      killGroup(child);
    }, BLOCK_TIMEOUT_MS);
    // 'exit', not 'close': a process an example left in the background may hold the pipes open.
    child.on('exit', (code) => {
      clearTimeout(timer);
      killGroup(child);
      setTimeout(() => resolve({ code, output }), 50);
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Why an example cannot run here (one line, with how to get what is missing), or undefined. */
function missingFor(example: DocExample): { line: string; required: boolean } | undefined {
  const missing = [...example.needs, ...example.optional].filter((tool) => !onPath(tool));
  if (missing.length) {
    const how = missing.map((tool) => `${tool} not installed (${HOW_TO_GET[tool] ?? 'bash .ci/run installs it'})`).join(', ');
    return { line: how, required: missing.some((tool) => example.needs.includes(tool)) };
  }
  const modules = pythonModules(example).join(',');
  if (modules) {
    // One interpreter start per set of modules: importing openai takes seconds on a busy machine.
    if (!pythonChecks.has(modules)) pythonChecks.set(modules, pythonPrerequisite(modules.split(',')));
    const python = pythonChecks.get(modules)!;
    if (!python.available) return { line: python.reason, required: true };
  }
  return undefined;
}
const pythonChecks = new Map<string, Prerequisite>();

// DOCS_EXAMPLES=docs/fitting.md (comma-separated) runs only those files' examples, while writing them.
const only = process.env.DOCS_EXAMPLES?.split(',').filter(Boolean);
const everyFile = docFiles(repoRoot).map((file) => ({ file, examples: extractExamples(repoRoot, file) }));
const all = everyFile.filter(({ file }) => !only || only.some((o) => file.includes(o)));
const files = all.map((f) => ({ ...f, examples: f.examples.filter((e) => !e.noRun && !e.freshClone) })).filter((f) => f.examples.length);
const runnable = files.flatMap((f) => f.examples);
const shown = all.flatMap((f) => f.examples).length;

describe('docs examples', () => {
  it('every block not run says why in this test', () => {
    const notRun = everyFile.flatMap(({ examples }) => examples.filter((e) => e.noRun));
    const reason = (e: DocExample) => NOT_RUN.find((n) => n.file === e.file && e.code.trimStart().startsWith(n.starts));
    expect(notRun.filter((e) => !reason(e)).map((e) => `${e.file}:${e.line} is no-run without a reason in NOT_RUN`)).toEqual([]);
    expect(NOT_RUN.filter((n) => !notRun.some((e) => reason(e) === n)).map((n) => `NOT_RUN names no block: ${n.file} ${n.starts}`)).toEqual(
      [],
    );
  });

  it('the one fresh-clone block is the README quick start, which test/packages/fresh-clone.test.ts runs as written', () => {
    const freshClone = everyFile.flatMap(({ examples }) => examples.filter((e) => e.freshClone));
    expect(freshClone.map((e) => [e.file, e.code.trim()])).toEqual([['README.md', 'npm ci && npm start']]);
  });
});

describe('docs examples run against the demo (npm start)', () => {
  let demo: ChildProcess | undefined;
  let demoOutput = '';
  let httpPort = 0;
  let grpcPort = 0;

  let untrackedBefore = new Set<string>();
  // The demo's store starts empty, as in a fresh clone, whatever a developer's own `npm start` left in
  // the repository's `.data/` (the walkthroughs create named things and say what a second run answers),
  // and the tests leave that store alone. The examples' shells get it too: `npm run store` reads the
  // demo's store, as it does beside a user's `npm start`.
  let demoDataDir = '';

  beforeAll(async () => {
    untrackedBefore = new Set(untrackedFiles());
    [httpPort, grpcPort] = [await freePort(), await freePort()];
    demoDataDir = mkdtempSync(join(tmpdir(), 'docs-demo-data-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GATEWAY_DATA_DIR: demoDataDir,
      HTTP_PORT: String(httpPort),
      GRPC_PORT: String(grpcPort),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'warn',
    };
    delete env.GATEWAY_CONFIG; // the demo, as `npm start` runs it
    delete env.MONGODB_URI;
    // The README's command in the repository root: npm's prestart builds dist/ when stale, then the compiled gateway starts.
    demo = spawn('npm', ['start', '-s'], { cwd: repoRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    demo.stdout!.on('data', (c: Buffer) => {
      demoOutput += c.toString();
    });
    demo.stderr!.on('data', (c: Buffer) => {
      demoOutput += c.toString();
    });
    // The banner comes once the launched services are connected (or have given up).
    const deadline = Date.now() + DEMO_START_MS;
    while (!demoOutput.includes('Gateway ready')) {
      if (demo.exitCode !== null || Date.now() > deadline) throw new Error(`the demo did not start:\n${demoOutput.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    process.stderr.write(
      `docs examples: ${runnable.length} of ${shown} examples (the rest are no-run) in ${files.length} files run against the demo\n`,
    );
  }, DEMO_START_MS + 10_000);

  afterAll(async () => {
    if (!demo || demo.exitCode !== null) return;
    const exited = new Promise((r) => demo!.once('exit', r));
    killGroup(demo, 'SIGTERM'); // npm, the gateway and the services it launched
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    killGroup(demo);
    rmSync(demoDataDir, { recursive: true, force: true });
  }, 20_000);

  for (const { file, examples } of files) {
    describe(file, () => {
      let dir = '';
      beforeAll(() => {
        dir = workDir();
      });
      afterAll(() => rmSync(dir, { recursive: true, force: true }));

      for (const example of examples) {
        const name = `${example.file}:${example.line} (${example.language})`;
        it(
          name,
          async (context) => {
            const missing = missingFor(example);
            if (missing) {
              // The suite-wide rule: one SKIPPED line, a failure under CI=true (optional tools never fail).
              if (missing.required) requirePrerequisite(`example ${name}`, { available: false, reason: missing.line });
              else process.stderr.write(`\n*** SKIPPED example ${name}: ${missing.line} ***\n`);
              context.skip(missing.line); // counted as skipped, never as passed
            }
            const result = await runExample(example, dir, httpPort, grpcPort, demoDataDir);
            expect(
              result.code,
              `${name} failed (exit ${result.code}):\n${result.output}\n--- the demo's last output:\n${demoOutput.slice(-1500)}`,
            ).toBe(0);
            if (example.output) {
              // The gateway's own log lines (`--check` logs its store) are not what the docs show.
              const printed = withDocsPorts(result.output, httpPort, grpcPort)
                .split('\n')
                .filter((line) => !GATEWAY_LOG_LINE.test(line))
                .join('\n');
              const shownAt = `${example.file}:${example.output.line}`;
              expect(
                outputMatches(example.output.text, printed),
                `${name} printed what ${shownAt} does not show (IDs, timestamps, ports and … aside):\n--- printed\n${printed}\n--- ${shownAt}\n${example.output.text}`,
              ).toBe(true);
            }
          },
          BLOCK_TIMEOUT_MS + 5_000,
        );
      }
    });
  }

  // What the examples save (my-first.yaml, my-gateway.yaml, gate_pb2.py, speech.wav …) stays in their scratch folders.
  it('leaves no new file in the repository', () => {
    expect(untrackedFiles().filter((path) => !untrackedBefore.has(path))).toEqual([]);
  });
});

/** Files in the repository that git neither tracks nor ignores (none outside a git checkout). */
function untrackedFiles(): string[] {
  const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repoRoot, encoding: 'utf8' });
  return status.status === 0
    ? status.stdout
        .split('\n')
        .filter((line) => line.startsWith('?? '))
        .map((line) => line.slice(3))
    : [];
}

function runExample(example: DocExample, dir: string, httpPort: number, grpcPort: number, demoDataDir: string): Promise<Run> {
  const code = withPorts(example.code, httpPort, grpcPort);
  if (example.saveAs) {
    writeFileSync(join(dir, example.saveAs), code);
    return Promise.resolve({ code: 0, output: '' });
  }
  const env = {
    ...process.env,
    GATEWAY_DATA_DIR: demoDataDir,
    PATH: `${join(repoRoot, '.venv', 'bin')}:${join(repoRoot, 'node_modules', '.bin')}:${process.env.PATH}`,
  };
  if (example.language === 'sh') {
    const script = shellScript(example, code, join(dir, '.example-state'));
    return run('bash', ['-c', script], dir, env);
  }
  const path = join(dir, `example-${example.line}.${example.language === 'ts' ? 'ts' : 'py'}`);
  writeFileSync(path, code);
  return example.language === 'ts' ? run(process.execPath, ['--import', TSX_LOADER, path], dir, env) : run('python3', [path], dir, env);
}
