import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { readWav } from '../../core/speech/wav.js';
import { ServiceError, audioPayload, readTtsRequest, type ModelHandlers, type ModelService } from '../../sdk/index.js';
import { TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { TTS_TOKEN, espeakPrerequisite, rms, speechConfigInput, startService, startTtsService } from '../support/speech.js';

/** The OpenAI-compatible speech bridge, judged by the official OpenAI Node SDK. */
describe('audio-speech plugin: POST /api/adapters/chatapi/audio/speech', () => {
  let gw: TestGateway | undefined;
  const services: ModelService[] = [];

  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop().catch(() => undefined)));
    await gw?.close();
    gw = undefined;
  });

  const start = async () => (gw = await startTestGateway(speechConfigInput(['audio-speech'])));
  const serve = async (handlers: ModelHandlers) => services.push(await startService(gw!.grpcAddress, TTS_TOKEN, handlers));
  const openai = (apiKey = TEST_KEY) => new OpenAI({ apiKey, baseURL: `${gw!.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
  const counting = (from: number, length: number) => Buffer.from(Array.from({ length }, (_, i) => (from + i) % 251));

  it('streams WAV: the first bytes reach the caller before the service has finished synthesizing', async () => {
    await start();
    const events: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const requests: unknown[] = [];
    await serve({
      async *partialPredict(input, ctx) {
        ctx.eagerFrames = true;
        for await (const chunk of input) requests.push(readTtsRequest(chunk.data));
        yield audioPayload(counting(0, 12288));
        events.push('service: first audio sent');
        // The rest of the audio exists only once the caller has the first bytes in hand.
        await released;
        yield audioPayload(counting(12288, 5000));
        events.push('service: finished');
      },
    });

    const response = await openai().audio.speech.create({
      model: 'demo/tts',
      input: 'Hello there.',
      voice: 'alloy',
      response_format: 'wav',
    });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.headers.get('content-length')).toBeNull();
    const reader = response.body!.getReader();
    const parts: Buffer[] = [];
    const first = await reader.read();
    parts.push(Buffer.from(first.value!));
    events.push('caller: first bytes');
    release();
    for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(Buffer.from(next.value));
    events.push('caller: end of audio');

    expect(events).toEqual(['service: first audio sent', 'caller: first bytes', 'service: finished', 'caller: end of audio']);
    const body = Buffer.concat(parts);
    // A streaming WAV header (sizes unknown, 0xFFFFFFFF) at 24 kHz mono 16-bit, then the audio as sent.
    expect(body.toString('ascii', 0, 4)).toBe('RIFF');
    expect(body.readUInt32LE(40)).toBe(0xffffffff);
    expect(readWav(body)).toEqual({ sampleRate: 24000, channels: 1, pcm: counting(0, 17288) });
    expect(requests).toEqual([
      {
        text: 'Hello there.',
        voice: 'alloy',
        output_audio_spec: { audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 24000, chunk_size_kb: 4 },
      },
    ]);
  });

  it('returns raw PCM for response_format pcm, at /v1 and without it, with a Bearer or a raw key', async () => {
    await start();
    await serve({
      async *partialPredict(input) {
        for await (const _ of input) void _;
        yield audioPayload(counting(0, 9999));
      },
    });
    const response = await openai().audio.speech.create({ model: 'demo/tts', input: 'x', voice: 'echo', response_format: 'pcm' });
    expect(response.headers.get('content-type')).toBe('audio/pcm');
    expect(Buffer.from(await response.arrayBuffer()).equals(counting(0, 9999))).toBe(true);

    const raw = await fetch(`${gw!.httpUrl}/api/adapters/chatapi/audio/speech`, {
      method: 'POST',
      headers: { authorization: TEST_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/tts', input: 'x', response_format: 'pcm' }),
    });
    expect(raw.status).toBe(200);
    expect(Buffer.from(await raw.arrayBuffer()).length).toBe(9999);
  });

  it("answers errors in the OpenAI envelope: 401, 400 with param, 404 unknown model, the service's 400", async () => {
    await start();
    await serve({
      async *partialPredict(input) {
        for await (const chunk of input) {
          if (readTtsRequest(chunk.data).voice === 'nobody')
            throw ServiceError.badRequest("voice 'nobody' does not exist", { voice: 'nobody' });
        }
        yield audioPayload(counting(0, 10));
      },
    });
    const speak = (body: Record<string, unknown>, key?: string) => openai(key).audio.speech.create(body as never);

    const unauthorized = await speak({ model: 'demo/tts', input: 'x', voice: 'alloy' }, 'wrong-key').catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unauthorized).toMatchObject({ status: 401, code: 'API_KEY_INVALID', type: 'authentication_error' });

    const mp3 = await speak({ model: 'demo/tts', input: 'x', voice: 'alloy', response_format: 'mp3' }).catch((e: unknown) => e);
    expect(mp3).toBeInstanceOf(OpenAI.BadRequestError);
    expect(mp3).toMatchObject({ status: 400, param: 'response_format', code: 'VALIDATION_FAILED' });

    const noInput = await speak({ model: 'demo/tts', voice: 'alloy' }).catch((e: unknown) => e);
    expect(noInput).toMatchObject({ status: 400, param: 'input' });
    const tooLong = await speak({ model: 'demo/tts', voice: 'alloy', input: 'x'.repeat(4097) }).catch((e: unknown) => e);
    expect(tooLong).toMatchObject({ status: 400, param: 'input' });

    for (const model of ['demo/no-such-tts', 'nobody/tts', 'tts']) {
      const unknown = await speak({ model, input: 'x', voice: 'alloy' }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
      expect(unknown).toMatchObject({ status: 404, param: 'model', code: 'MODEL_NOT_FOUND' });
    }

    const refused = await speak({ model: 'demo/tts', input: 'x', voice: 'nobody' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({
      status: 400,
      code: 'platform-action.common.bad-request',
      message: expect.stringContaining("voice 'nobody' does not exist"),
    });

    const missing = await fetch(`${gw!.httpUrl}/api/adapters/chatapi/v1/audio/speech`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ error: { code: 'API_KEY_MISSING', type: 'authentication_error' } });
  });

  it('cuts the connection when the service fails after the audio has started', async () => {
    await start();
    await serve({
      async *partialPredict(input, ctx) {
        ctx.eagerFrames = true;
        for await (const _ of input) void _;
        yield audioPayload(counting(0, 12288));
        throw new Error('engine crashed');
      },
    });
    const response = await openai().audio.speech.create({ model: 'demo/tts', input: 'x', voice: 'alloy' });
    expect(response.status).toBe(200);
    // A truncated download must not look like a complete one.
    await expect(response.arrayBuffer()).rejects.toThrow();
  });

  it('cancels the synthesis at the service when the caller disconnects mid-stream', async () => {
    await start();
    let aborted = false;
    await serve({
      async *partialPredict(input, ctx) {
        ctx.eagerFrames = true;
        ctx.signal.addEventListener('abort', () => (aborted = true));
        for await (const _ of input) void _;
        for (let i = 0; i < 100_000 && !ctx.signal.aborted; i++) {
          yield audioPayload(Buffer.alloc(16384, i));
          await new Promise((r) => setTimeout(r, 5));
        }
      },
    });
    const controller = new AbortController();
    const response = await fetch(`${gw!.httpUrl}/api/adapters/chatapi/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/tts', input: 'x', response_format: 'pcm' }),
      signal: controller.signal,
    });
    await response.body!.getReader().read();
    controller.abort();
    await eventually(() => aborted, 5000, 'the service to get cancel');
    await eventually(() => gw!.gateway.gate.instances(20)[0]?.inFlight === 0, 5000, 'the call to be released');
  });

  const ready = requirePrerequisite('audio/speech with espeak-ng', espeakPrerequisite());

  it.skipIf(!ready)('speaks with the espeak-ng example service', async () => {
    await start();
    services.push(await startTtsService(gw!.grpcAddress));
    const response = await openai().audio.speech.create({
      model: 'demo/tts',
      input: 'The quick brown fox jumps over the lazy dog.',
      voice: 'alloy',
      response_format: 'wav',
    });
    const audio = readWav(Buffer.from(await response.arrayBuffer()));
    expect(audio.sampleRate).toBe(24000);
    const seconds = audio.pcm.length / 2 / 24000;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(6);
    expect(rms(audio.pcm)).toBeGreaterThan(500);
  });
});
