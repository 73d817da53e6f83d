import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AsrResponseProto, TtsResponseProto } from '../../proto/src/index.js';
import type { GateClient, ModelService } from '../../sdk/index.js';
import { ASR_BUSY, createAsrHandlers } from '../../examples/asr-pocketsphinx/service.js';
import { TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { describePythonFailure, generatePythonStubs, pythonPrerequisite, runPython } from '../support/python.js';
import {
  PHRASES,
  PHRASE_GRAMMAR,
  espeakPrerequisite,
  rms,
  speechClient,
  speechConfigInput,
  speechEnginesPrerequisite,
  ASR_TOKEN,
  POCKETSPHINX_PYTHON,
  startAsrService,
  startService,
  startTtsService,
  zeroCrossingsPerSecond,
} from '../support/speech.js';

/**
 * The example services with their real engines behind the real gateway: espeak-ng speaks, pocketsphinx
 * listens. The recognizer is limited to a few phrases (provider_specific `phrases`, a JSGF grammar),
 * because pocketsphinx's general English model hears espeak-ng's voice poorly; with the grammar the
 * assertion is meaningful: it must pick the phrase that was spoken out of five.
 */
const ttsReady = requirePrerequisite('TTS with espeak-ng', espeakPrerequisite());
const asrReady = requirePrerequisite('ASR with pocketsphinx', speechEnginesPrerequisite());

async function synthesize(
  c: GateClient,
  text: string,
  spec: { sample_rate_hertz?: number; chunk_size_kb?: number } = {},
  voice?: string,
): Promise<TtsResponseProto[]> {
  const chunks: TtsResponseProto[] = [];
  for await (const chunk of c.synthesize({ text, ...(voice ? { voice } : {}), output_audio_spec: spec }, { model: 'tts' }))
    chunks.push(chunk);
  return chunks;
}
const audioOf = (chunks: TtsResponseProto[]) => Buffer.concat(chunks.map((c) => c.audio_chunk!.data!));

/** Streams `audio` in `pieceBytes` messages, as a live source would, and collects every result. */
async function recognize(c: GateClient, audio: Buffer, config: Record<string, unknown>, pieceBytes = 640): Promise<AsrResponseProto[]> {
  const stream = c.recognize(
    { audio_encoding: 'LINEAR16_PCM', language_code: 'en-US', provider_specific: PHRASE_GRAMMAR, ...config },
    { model: 'asr' },
  );
  for (let i = 0; i < audio.length; i += pieceBytes) {
    if (!stream.write(audio.subarray(i, i + pieceBytes))) await stream.drained();
  }
  stream.end();
  const results: AsrResponseProto[] = [];
  for await (const r of stream) results.push(r);
  return results;
}
const chunksOf = (results: AsrResponseProto[]) => results.flatMap((r) => r.chunks ?? []);
const finalTexts = (results: AsrResponseProto[]) =>
  chunksOf(results)
    .filter((c) => c.final)
    .map((c) => c.alternatives![0]!.text);

/** Normalized correlation of 16-bit PCM `a` with `b(i)` over a's samples (1 = the same waveform). */
function correlation(a: Buffer, b: (i: number) => number): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length / 2 - 2; i++) {
    const x = a.readInt16LE(i * 2);
    const y = b(i);
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / Math.sqrt(aa * bb);
}

/** Quiet noise (not digital silence, which pocketsphinx's voice detector handles badly) between phrases. */
function noise(seconds: number, rate: number): Buffer {
  const out = Buffer.alloc(Math.round(seconds * rate) * 2);
  let seed = 12345;
  for (let i = 0; i < out.length / 2; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out.writeInt16LE((seed % 129) - 64, i * 2);
  }
  return out;
}

describe.skipIf(!ttsReady)('TTS example service (espeak-ng) over processSynthesis', () => {
  let gw: TestGateway;
  let tts: ModelService;
  let client: GateClient;
  beforeAll(async () => {
    gw = await startTestGateway(speechConfigInput());
    tts = await startTtsService(gw.grpcAddress);
    client = speechClient(gw.grpcAddress);
  });
  afterAll(async () => {
    client?.close();
    await tts?.stop();
    await gw?.close();
  });

  const sentence = 'The quick brown fox jumps over the lazy dog.';

  it('returns speech as valid PCM of the asked rate, cut at chunk_size_kb, with first and last', async () => {
    const at16 = await synthesize(client, sentence, { sample_rate_hertz: 16000, chunk_size_kb: 2 });
    const at8 = await synthesize(client, sentence, { sample_rate_hertz: 8000, chunk_size_kb: 1 });
    for (const [chunks, size] of [
      [at16, 2048],
      [at8, 1024],
    ] as const) {
      expect(chunks.length).toBeGreaterThan(3);
      expect(chunks.slice(0, -1).every((c) => c.audio_chunk!.data!.length === size)).toBe(true);
      expect(chunks.at(-1)!.audio_chunk!.data!.length).toBeLessThanOrEqual(size);
      expect(chunks.map((c) => Boolean(c.first))).toEqual(chunks.map((_, i) => i === 0));
      expect(chunks.map((c) => Boolean(c.last))).toEqual(chunks.map((_, i) => i === chunks.length - 1));
    }
    const pcm16 = audioOf(at16);
    const pcm8 = audioOf(at8);
    expect(pcm16.length % 2).toBe(0);
    // Nine words at espeak-ng's 175 words a minute: about three seconds, whatever the rate.
    const seconds16 = pcm16.length / 2 / 16000;
    const seconds8 = pcm8.length / 2 / 8000;
    expect(seconds16).toBeGreaterThan(1.5);
    expect(seconds16).toBeLessThan(6);
    expect(Math.abs(seconds8 - seconds16)).toBeLessThan(0.01);
    // Speech, not silence or noise: loud enough, and its zero-crossing rate is that of a voice
    // (a few hundred to a few thousand per second) at the rate the samples claim.
    expect(rms(pcm16)).toBeGreaterThan(500);
    const crossings16 = zeroCrossingsPerSecond(pcm16, 16000);
    expect(crossings16).toBeGreaterThan(200);
    expect(crossings16).toBeLessThan(4000);
    // The 8 kHz audio is the same signal at half the rate: it matches every other 16 kHz sample.
    const similarity = correlation(pcm8, (i) => pcm16.readInt16LE(i * 4));
    expect(similarity).toBeGreaterThan(0.9);
    // Longer text, longer audio.
    const longer = audioOf(await synthesize(client, `${sentence} ${sentence}`, { sample_rate_hertz: 16000 }));
    expect(longer.length).toBeGreaterThan(pcm16.length * 1.6);
  });

  it('honours the voice (espeak-ng names and OpenAI names) and refuses an unknown one', async () => {
    const plain = audioOf(await synthesize(client, 'hello', {}, 'en-us'));
    const female = audioOf(await synthesize(client, 'hello', {}, 'nova'));
    expect(female.equals(plain)).toBe(false);
    await expect(synthesize(client, 'hello', {}, 'xx-no-such-voice')).rejects.toMatchObject({
      code: 'platform-action.common.bad-request',
      statusCode: 400,
    });
    await expect(synthesize(client, 'hello', {}, '--help')).rejects.toMatchObject({ statusCode: 400 });
  });

  it('streams: the first chunk reaches the caller while the service is still speaking', async () => {
    // About two minutes of speech: espeak-ng needs a good fraction of a second of CPU for it.
    const text = Array.from({ length: 40 }, () => sentence).join(' ');
    let inFlightAtFirst: number | undefined;
    let total = 0;
    for await (const chunk of client.synthesize(
      { text, output_audio_spec: { sample_rate_hertz: 16000, chunk_size_kb: 4 } },
      { model: 'tts' },
    )) {
      if (chunk.first) inFlightAtFirst = gw.gateway.gate.instances(20)[0]!.inFlight;
      total += chunk.audio_chunk!.data!.length;
    }
    expect(inFlightAtFirst).toBe(1);
    expect(total / 2 / 16000).toBeGreaterThan(60);
    expect(gw.gateway.gate.instances(20)[0]!.inFlight).toBe(0);
  });
});

describe.skipIf(!asrReady)('ASR example service (pocketsphinx) over processRecognition', () => {
  let gw: TestGateway;
  const services: ModelService[] = [];
  let client: GateClient;
  beforeAll(async () => {
    gw = await startTestGateway(speechConfigInput());
    services.push(await startTtsService(gw.grpcAddress), await startAsrService(gw.grpcAddress));
    client = speechClient(gw.grpcAddress);
  });
  afterAll(async () => {
    client?.close();
    await Promise.all(services.map((s) => s.stop()));
    await gw?.close();
  });

  it('recognizes a phrase synthesized by the TTS service and streamed in 20 ms pieces; only final results by default', async () => {
    for (const phrase of ['turn on the light', 'open the door please']) {
      const audio = audioOf(await synthesize(client, phrase, { sample_rate_hertz: 16000 }));
      const results = await recognize(client, audio, { sample_rate_hertz: 16000 });
      expect(chunksOf(results).every((c) => c.final === true)).toBe(true);
      expect(finalTexts(results)).toEqual([phrase]);
      const [chunk] = chunksOf(results);
      expect(chunk!.end_of_utterance).toBe(true);
      const words = chunk!.alternatives![0]!.words!;
      expect(words.map((w) => w.word)).toEqual(phrase.split(' '));
      const seconds = (d: { seconds?: number; nanos?: number } | undefined) => (d?.seconds ?? 0) + (d?.nanos ?? 0) / 1e9;
      for (let i = 1; i < words.length; i++)
        expect(seconds(words[i]!.start_time)).toBeGreaterThanOrEqual(seconds(words[i - 1]!.start_time));
    }
  });

  it('sends tentative results as the phrase grows when enable_partial_results is true', async () => {
    const phrase = 'one two three four five';
    const audio = audioOf(await synthesize(client, phrase, { sample_rate_hertz: 16000 }));
    const results = await recognize(client, audio, { sample_rate_hertz: 16000, enable_partial_results: true });
    const chunks = chunksOf(results);
    const partials = chunks.filter((c) => !c.final);
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.every((c) => c.end_of_utterance !== true)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ final: true, end_of_utterance: true });
    expect(finalTexts(results)).toEqual([phrase]);
    // Tentative results come before the final one and grow towards it.
    expect(phrase.startsWith(partials[0]!.alternatives![0]!.text!.split(' ')[0]!)).toBe(true);
  });

  it('cuts utterances at pauses, resamples 8 kHz audio, and recognizes each phrase', async () => {
    const first = audioOf(await synthesize(client, 'hello world', { sample_rate_hertz: 8000 }));
    const second = audioOf(await synthesize(client, 'close the window', { sample_rate_hertz: 8000 }));
    const audio = Buffer.concat([first, noise(1.2, 8000), second, noise(0.3, 8000)]);
    const results = await recognize(client, audio, { sample_rate_hertz: 8000 }, 320);
    expect(finalTexts(results)).toEqual(['hello world', 'close the window']);
    expect(chunksOf(results).every((c) => c.end_of_utterance)).toBe(true);
  });

  it('answers a service-side refusal: an unsupported language, or a phrase with unknown words', async () => {
    const audio = noise(0.2, 16000);
    await expect(recognize(client, audio, { sample_rate_hertz: 16000, language_code: 'de-DE' })).rejects.toMatchObject({
      code: 'platform-action.common.bad-request',
      statusCode: 400,
    });
    await expect(
      recognize(client, audio, { sample_rate_hertz: 16000, provider_specific: JSON.stringify({ phrases: ['qwzx vbnm'] }) }),
    ).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('qwzx') });
  });

  const pythonReady = requirePrerequisite('speech over grpcio (Python client)', pythonPrerequisite(['grpc', 'grpc_tools']));

  it.skipIf(!pythonReady)('works for a Python grpcio client written from the proto', async () => {
    const stubs = mkdtempSync(join(tmpdir(), 'gate-speech-py-'));
    await generatePythonStubs(stubs);
    const phrase = PHRASES[1]!;
    const run = await runPython('speech_client.py', [stubs, gw.grpcAddress, TEST_KEY, phrase, PHRASE_GRAMMAR], { timeoutMs: 90_000 });
    expect(run.code, describePythonFailure(run)).toBe(0);
    const out = JSON.parse(run.stdout) as {
      tts: { size: number; first: boolean; last: boolean }[];
      asr: { text: string; final: boolean; end_of_utterance: boolean; words: string[] }[];
      asr_partial: { text: string; final: boolean }[];
      asr_audio_first: { error?: string; status?: number }[];
    };
    expect(out.tts.length).toBeGreaterThan(2);
    expect(out.tts.slice(0, -1).every((c) => c.size === 1024)).toBe(true);
    expect(out.tts.map((c) => c.first)).toEqual(out.tts.map((_, i) => i === 0));
    expect(out.tts.map((c) => c.last)).toEqual(out.tts.map((_, i) => i === out.tts.length - 1));
    expect(out.asr).toEqual([{ text: phrase, final: true, end_of_utterance: true, words: phrase.split(' ') }]);
    expect(out.asr_partial.some((r) => !r.final)).toBe(true);
    expect(out.asr_partial.at(-1)).toMatchObject({ text: phrase, final: true });
    expect(out.asr_audio_first).toEqual([{ error: 'SPEECH_CONFIG_REQUIRED', status: 400 }]);
  });
});

describe.skipIf(!asrReady)('ASR example service: a bounded number of recognizers keeps it alive', () => {
  let gw: TestGateway;
  let service: ModelService;
  let client: GateClient;
  beforeAll(async () => {
    // Heartbeats every 200 ms: a service silent for 1.6 s is dropped, so a starved one shows at once.
    gw = await startTestGateway({ ...speechConfigInput(), gate: { heartbeatIntervalMs: 200 } });
    service = await startService(
      gw.grpcAddress,
      ASR_TOKEN,
      createAsrHandlers({ python: POCKETSPHINX_PYTHON, maxRecognizers: 2 }),
      'asr-pocketsphinx',
    );
    client = speechClient(gw.grpcAddress);
  });
  afterAll(async () => {
    client?.close();
    await service?.stop();
    await gw?.close();
  });

  it('refuses a stream past maxRecognizers with 503 asr.busy, stays connected, and serves again once one ends', async () => {
    // Before the cap, 200 recognition streams were 200 pocketsphinx processes and the service missed its heartbeats.
    let drops = 0;
    service.on('disconnected', () => drops++);
    const held = [0, 1].map(() => {
      const stream = client.recognize(
        { audio_encoding: 'LINEAR16_PCM', language_code: 'en-US', sample_rate_hertz: 16000, provider_specific: PHRASE_GRAMMAR },
        { model: 'asr' },
      );
      stream.write(noise(0.2, 16000));
      const results = (async () => {
        for await (const _ of stream) {
          /* drained until the end */
        }
      })();
      return { stream, results };
    });
    // The two recognizers start when their first audio reaches the service; until then a third may pass.
    let refusal: unknown;
    await eventually(
      async () => {
        refusal = await recognize(client, noise(0.2, 16000), { sample_rate_hertz: 16000 }).then(
          () => undefined,
          (err: unknown) => err,
        );
        return refusal !== undefined;
      },
      15_000,
      'a refusal while two recognizers run',
    );
    expect(refusal).toMatchObject({ code: ASR_BUSY, statusCode: 503 });
    // Held well past the gateway's silence limit: heartbeats kept flowing.
    await new Promise((r) => setTimeout(r, 2500));
    expect(drops).toBe(0);
    for (const { stream } of held) stream.end();
    await Promise.all(held.map((h) => h.results));
    await expect(recognize(client, noise(0.2, 16000), { sample_rate_hertz: 16000 })).resolves.toBeDefined();
    expect(drops).toBe(0);
  });
});
