/**
 * The speech side of the test environment: the engines' prerequisite checks, a gateway config with a
 * TTS and an ASR service, the example services started in-process on the real SDK, and PCM helpers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ASR_DESCRIPTOR, createAsrHandlers } from '../../examples/asr-pocketsphinx/service.js';
import { checkPocketsphinx } from '../../examples/asr-pocketsphinx/recognizer.js';
import { TTS_DESCRIPTOR, createTtsHandlers } from '../../examples/tts-espeak/service.js';
import { GateClient, serveModel, type ModelHandlers, type ModelService } from '../../sdk/index.js';
import type { Prerequisite } from './prerequisites.js';
import { TEST_KEY, testConfigInput } from './gateway.js';

export const TTS_TOKEN = 'tts-service-token-000001';
export const ASR_TOKEN = 'asr-service-token-000001';
export const POCKETSPHINX_PYTHON = process.env.POCKETSPHINX_PYTHON || '/usr/bin/python3';
const MODEL_DIR = process.env.POCKETSPHINX_MODEL_DIR || '/usr/share/pocketsphinx/model/en-us';

/** Phrases the recognizer is limited to in tests: the result must be the one that was spoken. */
export const PHRASES = ['hello world', 'turn on the light', 'open the door please', 'one two three four five', 'close the window'];
export const PHRASE_GRAMMAR = JSON.stringify({ phrases: PHRASES });

const onPath = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

export function espeakPrerequisite(): Prerequisite {
  return onPath('espeak-ng')
    ? { available: true, reason: '' }
    : { available: false, reason: 'espeak-ng is not installed (apt-get install espeak-ng; .ci/run installs it)' };
}

export function pocketsphinxPrerequisite(): Prerequisite {
  const check = checkPocketsphinx(POCKETSPHINX_PYTHON);
  if (!check.ok) return { available: false, reason: `${check.reason} (apt-get install python3-pocketsphinx; .ci/run installs it)` };
  if (!existsSync(`${MODEL_DIR}/en-us`))
    return { available: false, reason: `no pocketsphinx model in ${MODEL_DIR} (apt-get install pocketsphinx-en-us)` };
  return { available: true, reason: '' };
}

/** Both engines, for suites that synthesize and then recognize. */
export function speechEnginesPrerequisite(): Prerequisite {
  const missing = [espeakPrerequisite(), pocketsphinxPrerequisite()].filter((p) => !p.available);
  return missing.length ? { available: false, reason: missing.map((p) => p.reason).join('; ') } : { available: true, reason: '' };
}

/** The test config plus services `tts` (20) and `asr` (21) of account demo, and the given plugins. */
export function speechConfigInput(plugins: string[] = [], pluginOptions: Record<string, unknown> = {}): Record<string, any> {
  const base = testConfigInput();
  return {
    ...base,
    services: [
      ...base.services,
      { id: 20, name: 'tts', account: 'demo', public: true, connectionTokens: [{ token: TTS_TOKEN }] },
      { id: 21, name: 'asr', account: 'demo', public: true, connectionTokens: [{ token: ASR_TOKEN }] },
    ],
    plugins: { enabled: plugins, options: pluginOptions },
  };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** A model service on the SDK, connected to `grpcAddress` with `token`; resolves once registered. */
export async function startService(
  grpcAddress: string,
  token: string,
  handlers: ModelHandlers,
  name = 'speech-test',
): Promise<ModelService> {
  const service = serveModel(handlers, { descriptor: { name }, gateways: [grpcAddress], connectionToken: token, logger: quiet });
  await service.ready();
  return service;
}

export const startTtsService = (grpcAddress: string) => startService(grpcAddress, TTS_TOKEN, createTtsHandlers(), TTS_DESCRIPTOR.name);
export const startAsrService = (grpcAddress: string) =>
  startService(grpcAddress, ASR_TOKEN, createAsrHandlers({ python: POCKETSPHINX_PYTHON, modelDir: MODEL_DIR }), ASR_DESCRIPTOR.name);

export function speechClient(grpcAddress: string): GateClient {
  return new GateClient({ address: grpcAddress, authToken: TEST_KEY, account: 'demo' });
}

/** Root-mean-square level of 16-bit PCM (0 for silence; speech is in the thousands). */
export function rms(pcm: Buffer): number {
  let sum = 0;
  const n = Math.floor(pcm.length / 2);
  for (let i = 0; i < n; i++) sum += pcm.readInt16LE(i * 2) ** 2;
  return n ? Math.sqrt(sum / n) : 0;
}

/** The strongest frequency of 16-bit PCM by zero crossings: a rough check that audio is at `rate`. */
export function zeroCrossingsPerSecond(pcm: Buffer, rate: number): number {
  let crossings = 0;
  const n = Math.floor(pcm.length / 2);
  for (let i = 1; i < n; i++) if (pcm.readInt16LE((i - 1) * 2) < 0 !== pcm.readInt16LE(i * 2) < 0) crossings++;
  return (crossings / n) * rate;
}
