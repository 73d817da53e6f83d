import OpenAI, { toFile } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { wavHeader } from '../../core/speech/wav.js';
import { asrResponsePayload, readRecognitionConfig, type ModelHandlers, type ModelService } from '../../sdk/index.js';
import { TEST_KEY, startTestGateway, type TestGateway } from '../support/gateway.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { describePythonFailure, pythonPrerequisite, runPython } from '../support/python.js';
import {
  ASR_TOKEN,
  PHRASE_GRAMMAR,
  speechConfigInput,
  speechEnginesPrerequisite,
  startAsrService,
  startService,
  startTtsService,
} from '../support/speech.js';

const wavOf = (pcm: Buffer, rate: number, channels = 1) => Buffer.concat([wavHeader(rate, channels, pcm.length), pcm]);
const samples = (values: number[]) => {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeInt16LE(v, i * 2));
  return b;
};

/** The OpenAI-compatible transcription bridge, judged by the official OpenAI Node SDK. */
describe('audio-transcriptions plugin: POST /api/adapters/chatapi/audio/transcriptions', () => {
  let gw: TestGateway | undefined;
  const services: ModelService[] = [];

  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop().catch(() => undefined)));
    await gw?.close();
    gw = undefined;
  });

  const start = async (plugins = ['audio-transcriptions'], options: Record<string, unknown> = {}) =>
    (gw = await startTestGateway(speechConfigInput(plugins, options)));
  const openai = (apiKey = TEST_KEY) => new OpenAI({ apiKey, baseURL: `${gw!.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });

  /** Answers with the config it got and the audio's length and first samples, as two utterances. */
  const reportingService = (): ModelHandlers => ({
    async *partialPredict(input) {
      let config: unknown;
      const audio: Buffer[] = [];
      for await (const chunk of input) {
        if (chunk.start) config = readRecognitionConfig(chunk.config);
        audio.push(chunk.data.bytes ?? Buffer.alloc(0));
      }
      const pcm = Buffer.concat(audio);
      const final = (text: string) =>
        asrResponsePayload({ chunks: [{ alternatives: [{ text }], final: true, end_of_utterance: true }], final: true });
      yield asrResponsePayload({ chunks: [{ alternatives: [{ text: 'tentative' }], final: false }] });
      yield final(JSON.stringify(config));
      yield final(`${pcm.length} ${pcm.length >= 4 ? `${pcm.readInt16LE(0)},${pcm.readInt16LE(2)}` : ''}`);
    },
  });

  it('sends the WAV samples and their rate to the ASR service and returns the final text, as json or text', async () => {
    await start();
    services.push(await startService(gw!.grpcAddress, ASR_TOKEN, reportingService()));
    const pcm = samples(Array.from({ length: 50_000 }, (_, i) => (i % 200) - 100));
    const file = await toFile(wavOf(pcm, 22050), 'speech.wav', { type: 'audio/wav' });

    const json = await openai().audio.transcriptions.create({ model: 'demo/asr', file, language: 'en' });
    const [config, audio] = json.text.split('} ');
    expect(JSON.parse(`${config}}`)).toEqual({ audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 22050, language_code: 'en' });
    // Every sample arrived (sent in pieces), tentative results were not part of the transcript.
    expect(audio).toBe('100000 -100,-99');

    const text = await openai().audio.transcriptions.create({
      model: 'demo/asr',
      file: await toFile(wavOf(samples([7, 8]), 16000), 'a.wav'),
      response_format: 'text',
    });
    expect(text).toBe('{"audio_encoding":"LINEAR16_PCM","sample_rate_hertz":16000} 4 7,8');

    // Stereo is mixed down to mono.
    const stereo = await openai().audio.transcriptions.create({
      model: 'demo/asr',
      file: await toFile(wavOf(samples([10, 30, -10, -30]), 8000, 2), 'b.wav'),
    });
    expect(stereo.text.endsWith('} 4 20,-20')).toBe(true);
  });

  it('answers bad uploads in the OpenAI envelope: 401, 400 with param, 404, 413, 415', async () => {
    await start(['audio-transcriptions'], { 'audio-transcriptions': { maxFileBytes: 4096 } });
    services.push(await startService(gw!.grpcAddress, ASR_TOKEN, reportingService()));
    const wav = () => toFile(wavOf(samples([1, 2, 3]), 16000), 'a.wav');
    const transcribe = async (body: Record<string, unknown>, key?: string) =>
      openai(key)
        .audio.transcriptions.create(body as never)
        .catch((e: unknown) => e);

    expect(await transcribe({ model: 'demo/asr', file: await wav() }, 'wrong')).toMatchObject({ status: 401, code: 'API_KEY_INVALID' });
    const notWav = await transcribe({ model: 'demo/asr', file: await toFile(Buffer.from('ID3\u0004 an mp3 file'), 'a.mp3') });
    expect(notWav).toBeInstanceOf(OpenAI.BadRequestError);
    expect(notWav).toMatchObject({ status: 400, param: 'file', code: 'AUDIO_FORMAT_UNSUPPORTED' });
    expect(await transcribe({ model: 'demo/asr', file: await wav(), response_format: 'srt' })).toMatchObject({
      status: 400,
      param: 'response_format',
    });
    expect(await transcribe({ model: 'demo/asr', file: await wav(), stream: true })).toMatchObject({ status: 400, param: 'stream' });
    const unknown = await transcribe({ model: 'demo/nope', file: await wav() });
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toMatchObject({ status: 404, param: 'model', code: 'MODEL_NOT_FOUND' });
    const large = await transcribe({ model: 'demo/asr', file: await toFile(wavOf(Buffer.alloc(8192), 16000), 'big.wav') });
    expect(large).toMatchObject({ status: 413, code: 'REQUEST_TOO_LARGE', param: 'file' });

    const url = `${gw!.httpUrl}/api/adapters/chatapi/audio/transcriptions`;
    const noFile = new FormData();
    noFile.set('model', 'demo/asr');
    const missing = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TEST_KEY}` }, body: noFile });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { param: 'file', type: 'invalid_request_error' } });
    const noModel = new FormData();
    noModel.set('file', new Blob([wavOf(samples([1]), 16000)]), 'a.wav');
    const modelless = await fetch(url, { method: 'POST', headers: { authorization: TEST_KEY }, body: noModel });
    expect(modelless.status).toBe(400);
    expect(await modelless.json()).toMatchObject({ error: { param: 'model' } });
    const asJson = await fetch(url, {
      method: 'POST',
      headers: { authorization: TEST_KEY, 'content-type': 'application/json' },
      body: '{"model":"demo/asr"}',
    });
    expect(asJson.status).toBe(415);
    expect(await asJson.json()).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  });

  const ready = requirePrerequisite('audio bridges with espeak-ng and pocketsphinx', speechEnginesPrerequisite());

  it.skipIf(!ready)('transcribes what the speech endpoint said, through the real engines', async () => {
    await start(['audio-speech', 'audio-transcriptions']);
    services.push(await startTtsService(gw!.grpcAddress), await startAsrService(gw!.grpcAddress));
    const client = openai();
    for (const phrase of ['hello world', 'close the window']) {
      const speech = await client.audio.speech.create({ model: 'demo/tts', input: phrase, voice: 'alloy', response_format: 'wav' });
      const file = await toFile(Buffer.from(await speech.arrayBuffer()), 'speech.wav');
      // provider_specific is the bridge's extra form field: recognize one of the test phrases.
      const transcript = await client.audio.transcriptions.create({ model: 'demo/asr', file, provider_specific: PHRASE_GRAMMAR } as never);
      expect(transcript).toEqual({ text: phrase });
    }
  });

  const pythonReady = ready && requirePrerequisite('audio bridges from the OpenAI Python client', pythonPrerequisite(['openai']));

  it.skipIf(!pythonReady)('works for the official OpenAI Python client', async () => {
    await start(['audio-speech', 'audio-transcriptions']);
    services.push(await startTtsService(gw!.grpcAddress), await startAsrService(gw!.grpcAddress));
    const phrase = 'open the door please';
    const run = await runPython('openai_audio.py', [`${gw!.httpUrl}/api/adapters/chatapi/v1`, TEST_KEY, phrase, PHRASE_GRAMMAR], {
      timeoutMs: 90_000,
    });
    expect(run.code, describePythonFailure(run)).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      speech_content_type: 'audio/wav',
      speech_bytes: expect.any(Number),
      speech_riff: 'RIFF',
      json_text: phrase,
      text: phrase,
      unknown_model: { status: 404, code: 'MODEL_NOT_FOUND', param: 'model' },
    });
  });
});
