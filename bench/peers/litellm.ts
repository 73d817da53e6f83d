/**
 * LiteLLM's proxy as a peer: the same mock upstream as Portkey, no database, no callbacks, in the
 * settings its production guide recommends for throughput (docs.litellm.ai/docs/proxy/prod): logs at
 * ERROR, verbose logging off, spend and error logs off, a master key (callers authenticate, as they
 * do with our gateway). One uvicorn worker, like our one gateway process: the guide's one worker per
 * core (`--num_workers 2`) did not answer its liveness probe within 90 s on the 2-core machine the
 * bench was written on (litellm 1.106.2; one worker starts in 10-30 s). BENCH_LITELLM_WORKERS
 * overrides it. The settings are recorded with the results.
 *
 * The streaming scenario starts a second one in front of the streaming ticker's direct SSE port
 * (model `bench/ticker`): that port is only known once the ticker runs, and LiteLLM reads its
 * model list at start.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, freePort, startChild, waitFor, type Child } from '../lib/procs.js';

export const LITELLM_KEY = 'sk-bench-litellm-master-key-0123456789';

/** A JSON request to the proxy with its master key. */
export function litellmHeaders(): Record<string, string> {
  return { 'content-type': 'application/json', authorization: `Bearer ${LITELLM_KEY}` };
}
const BIN = `${ROOT}bench/.venv-litellm/bin/litellm`;
const PYTHON = `${ROOT}bench/.venv-litellm/bin/python`;
const INSTALL = `${ROOT}bench/peers/litellm.sh`;

export interface LiteLlmSettings {
  version: string;
  workers: number;
  config: string;
  env: Record<string, string>;
}

/**
 * Installs LiteLLM, or upgrades it to the newest release (`npm run bench` does this before each run);
 * returns its version. The first install takes a minute or two.
 */
export function installLiteLlm(log: (line: string) => void): string {
  log(
    existsSync(BIN)
      ? '  litellm[proxy]: upgrading to the newest release if there is one'
      : '  installing litellm[proxy] into bench/.venv-litellm (first run only)',
  );
  const run = spawnSync('bash', [INSTALL], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`installing LiteLLM failed:\n${run.stderr.slice(-2000)}`);
  return run.stdout.trim().split('\n').at(-1) ?? 'unknown';
}

/** Whether LiteLLM is installed, and if not, how to install it (the smoke test runs without it then). */
export function liteLlmInstalled(): { available: boolean; reason: string } {
  if (existsSync(BIN)) return { available: true, reason: '' };
  return {
    available: false,
    reason: 'LiteLLM is not installed in bench/.venv-litellm (about 750 MB): bash bench/peers/litellm.sh, or bash .ci/run',
  };
}

/** The installed version; never installs (`npm run bench` and .ci/run do, before any run). */
function installedVersion(): string {
  if (!existsSync(BIN)) throw new Error(liteLlmInstalled().reason);
  const run = spawnSync(PYTHON, ['-c', 'import importlib.metadata as m; print(m.version("litellm"))'], { encoding: 'utf8' });
  return run.stdout.trim() || 'unknown';
}

/** `models`: model name → base URL of its OpenAI upstream, every one `openai/bench-1` there. */
function configYaml(models: Record<string, string>): string {
  return [
    'model_list:',
    ...Object.entries(models).flatMap(([name, upstreamUrl]) => [
      `  - model_name: ${name}`,
      '    litellm_params:',
      '      model: openai/bench-1',
      `      api_base: ${upstreamUrl}/v1`,
      '      api_key: sk-bench-upstream',
    ]),
    'litellm_settings:',
    '  set_verbose: false',
    '  request_timeout: 600',
    '  telemetry: false',
    'general_settings:',
    '  disable_spend_logs: true',
    '  disable_error_logs: true',
    '',
  ].join('\n');
}

/** LiteLLM serving `models` (name → upstream base URL), once it answers its liveness probe. */
export async function startLiteLlm(models: Record<string, string>): Promise<{ child: Child; port: number; settings: LiteLlmSettings }> {
  const version = installedVersion();
  const workers = Number(process.env.BENCH_LITELLM_WORKERS ?? 1);
  const dir = mkdtempSync(join(tmpdir(), 'bench-litellm-'));
  const configFile = join(dir, 'config.yaml');
  const config = configYaml(models);
  writeFileSync(configFile, config);
  const port = await freePort();
  // The model cost map bundled with the release: without this, every start fetches the newest one
  // from GitHub (and nothing under test downloads).
  const env = { LITELLM_MASTER_KEY: LITELLM_KEY, LITELLM_LOG: 'ERROR', LITELLM_LOCAL_MODEL_COST_MAP: 'True' };
  const child = await startChild('litellm', {
    script: BIN,
    executable: BIN,
    args: ['--config', configFile, '--host', '127.0.0.1', '--port', String(port), '--num_workers', String(workers)],
    env,
  });
  await waitFor('litellm', async () => (await fetch(`http://127.0.0.1:${port}/health/liveliness`)).ok, 180_000);
  return {
    child,
    port,
    settings: {
      version,
      workers,
      config,
      env: { LITELLM_LOG: 'ERROR', LITELLM_MASTER_KEY: '(set)', LITELLM_LOCAL_MODEL_COST_MAP: 'True' },
    },
  };
}
