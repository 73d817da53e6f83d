/**
 * The Python side of the test environment: the interpreter of the repo's `.venv` (made by
 * `bash .ci/run` from .ci/requirements.txt) or `$PYTHON`, a prerequisite check for suites that need
 * it, a runner for scripts under test/python/, and the grpc_tools.protoc stub generator.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Prerequisite } from './prerequisites.ts';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Folder of the reusable Python scripts of the test suite. */
export const pythonScriptsDir = join(repoRoot, 'test', 'python');

const SETUP_HINT = 'run bash .ci/run or create the venv with pip install -r .ci/requirements.txt';

/** `$PYTHON` when set, else `<repo>/.venv/bin/python`. */
export function pythonPath(): string {
  return process.env.PYTHON || join(repoRoot, '.venv', 'bin', 'python');
}

/** Available when the interpreter exists and imports every module (dotted names, e.g. `google.protobuf`). */
export function pythonPrerequisite(modules: string[]): Prerequisite {
  const python = pythonPath();
  const where = process.env.PYTHON ? `$PYTHON=${python}` : '.venv/bin/python';
  if (!existsSync(python)) {
    const missing = process.env.PYTHON ? `${where} does not exist` : `no ${where}`;
    return { available: false, reason: `${missing}: ${SETUP_HINT}` };
  }
  // One process for all modules; prints the first one that fails to import and why.
  const code = [
    'import importlib, sys',
    'for m in sys.argv[1:]:',
    '    try: importlib.import_module(m)',
    '    except Exception as e: print(f"{m} ({type(e).__name__}: {e})"); sys.exit(1)',
  ].join('\n');
  const run = spawnSync(python, ['-c', code, ...modules], { encoding: 'utf8', timeout: 30_000 });
  if (run.error) return { available: false, reason: `${where} does not run (${run.error.message}): ${SETUP_HINT}` };
  if (run.status !== 0) {
    const detail = (run.stdout.trim() || run.stderr.trim() || `exit ${run.status}`).split('\n').pop();
    return { available: false, reason: `${where} cannot import ${detail}: ${SETUP_HINT}` };
  }
  return { available: true, reason: '' };
}

export interface PythonResult {
  /** Exit code; null when killed (see `signal`, `timedOut`). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface RunPythonOptions {
  cwd?: string;
  /** Added to the current environment. */
  env?: Record<string, string>;
  /** Killed with SIGKILL after this long; default 60 s. */
  timeoutMs?: number;
  /** Written to stdin, which is then closed. */
  input?: string;
}

/**
 * Runs `python <script> <args…>` and collects its output. `script` is a path, or a bare file name
 * of test/python/. Resolves also on a non-zero exit or a timeout: check `code` and `timedOut`.
 */
export function runPython(script: string, args: string[] = [], options: RunPythonOptions = {}): Promise<PythonResult> {
  const scriptPath = script.includes('/') ? resolve(script) : join(pythonScriptsDir, script);
  return runInterpreter([scriptPath, ...args], options);
}

/** Runs the interpreter with raw arguments (e.g. `['-m', 'grpc_tools.protoc', …]`). */
export function runInterpreter(argv: string[], options: RunPythonOptions = {}): Promise<PythonResult> {
  const { cwd = repoRoot, env, timeoutMs = 60_000, input } = options;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(pythonPath(), argv, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${pythonPath()}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => {}); // the script may exit without reading its input
    child.stdin.end(input ?? '');
  });
}

/** One-line summary of a failed run, for assertion messages. */
export function describePythonFailure(result: PythonResult): string {
  const how = result.timedOut ? 'timed out' : `exited with ${result.code ?? result.signal}`;
  return `python ${how}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

let wellKnownProtos: string | undefined;

/** The include folder of the well-known protos (google/protobuf/*.proto) that grpcio-tools ships. */
export async function grpcToolsIncludeDir(): Promise<string> {
  if (wellKnownProtos) return wellKnownProtos;
  const result = await runInterpreter(['-c', 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))']);
  if (result.code !== 0) throw new Error(`grpc_tools not importable: ${describePythonFailure(result)}`);
  wellKnownProtos = result.stdout.trim();
  return wellKnownProtos;
}

/**
 * Generates gate_pb2.py and gate_pb2_grpc.py from proto/gate.proto into `outDir` (which must exist)
 * with the real protoc of grpcio-tools. Throws with protoc's messages when it fails.
 */
export async function generatePythonStubs(outDir: string): Promise<void> {
  const protoDir = join(repoRoot, 'proto');
  const result = await runInterpreter([
    '-m',
    'grpc_tools.protoc',
    `-I${protoDir}`,
    // gate.proto imports google/protobuf/duration.proto
    `-I${await grpcToolsIncludeDir()}`,
    `--python_out=${outDir}`,
    `--grpc_python_out=${outDir}`,
    join(protoDir, 'gate.proto'),
  ]);
  if (result.code !== 0) throw new Error(`grpc_tools.protoc failed: ${describePythonFailure(result)}`);
}
