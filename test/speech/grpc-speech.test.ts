import { afterEach, describe, expect, it } from 'vitest';
import type { ClientAsrRequestProto, ClientAsrResponseProto, ClientTtsResponseProto, TtsResponseProto } from '../../proto/src/index.js';
import { decodeRecognitionConfig } from '../../proto/src/index.js';
import {
  GateClient,
  GateClientError,
  ServiceError,
  SpeechDataTypes,
  asrResponsePayload,
  audioPayload,
  readRecognitionConfig,
  readTtsRequest,
  type ModelHandlers,
  type ModelService,
} from '../../sdk/index.js';
import { TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { rawClient, type RawClient } from '../support/raw-gate-client.js';
import { ASR_TOKEN, TTS_TOKEN, speechConfigInput, startService } from '../support/speech.js';

/**
 * The gRPC speech calls against model services written with the SDK whose "engines" are trivial, so
 * that chunking, flags, flow control and every bad input are checked exactly. The real engines are in
 * engines.test.ts.
 */
describe('gRPC speech calls (processSynthesis, processRecognition)', () => {
  let gw: TestGateway | undefined;
  const services: ModelService[] = [];
  const clients: (GateClient | RawClient)[] = [];

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(services.splice(0).map((s) => s.stop().catch(() => undefined)));
    await gw?.close();
    gw = undefined;
  });

  const start = async (options: Parameters<typeof startTestGateway>[1] = {}) => {
    gw = await startTestGateway(speechConfigInput(), options);
    return gw;
  };
  const serve = async (token: string, handlers: ModelHandlers) => {
    const service = await startService(gw!.grpcAddress, token, handlers);
    services.push(service);
    return service;
  };
  const client = () => {
    const c = new GateClient({ address: gw!.grpcAddress, authToken: TEST_KEY, account: 'demo' });
    clients.push(c);
    return c;
  };
  const raw = () => {
    const c = rawClient(gw!.grpcAddress);
    clients.push(c);
    return c;
  };
  const caught = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      return err as GateClientError;
    }
    throw new Error('expected an error');
  };

  /** Audio whose bytes count up, so order and completeness can be checked byte by byte. */
  const counting = (from: number, length: number) => Buffer.from(Array.from({ length }, (_, i) => (from + i) % 251));

  describe('synthesis', () => {
    /** Yields the audio in pieces of `sizes` (odd sizes on purpose); records what it received. */
    const piecesService = (received: unknown[]): ModelHandlers => ({
      async *partialPredict(input) {
        for await (const chunk of input) {
          received.push({ dataType: chunk.data.dataType, start: chunk.start, finish: chunk.finish, request: readTtsRequest(chunk.data) });
          const request = readTtsRequest(chunk.data);
          if (request.voice === 'refuse') throw ServiceError.badRequest('no such voice', { voice: 'refuse' });
          const sizes = (JSON.parse(request.text!) as { sizes: number[] }).sizes;
          let offset = 0;
          for (const size of sizes) {
            yield audioPayload(counting(offset, size));
            offset += size;
          }
        }
      },
    });
    const synthesize = async (c: GateClient, sizes: number[], spec: Record<string, unknown> = {}) => {
      const chunks: TtsResponseProto[] = [];
      for await (const chunk of c.synthesize(
        { text: JSON.stringify({ sizes }), voice: 'en-us', output_audio_spec: spec },
        { model: 'tts' },
      ))
        chunks.push(chunk);
      return chunks;
    };

    it('re-cuts the audio into chunks of chunk_size_kb, first on the first, last on the last', async () => {
      await start();
      const received: unknown[] = [];
      await serve(TTS_TOKEN, piecesService(received));
      const sizes = [1000, 3001, 517, 9000, 1, 2047];
      const total = sizes.reduce((a, b) => a + b, 0);
      const chunks = await synthesize(client(), sizes, { sample_rate_hertz: 22050, chunk_size_kb: 2 });

      expect(chunks.slice(0, -1).every((c) => c.audio_chunk!.data!.length === 2048)).toBe(true);
      expect(chunks.at(-1)!.audio_chunk!.data!.length).toBe(total % 2048);
      expect(chunks.map((c) => Boolean(c.first))).toEqual(chunks.map((_, i) => i === 0));
      expect(chunks.map((c) => Boolean(c.last))).toEqual(chunks.map((_, i) => i === chunks.length - 1));
      expect(Buffer.concat(chunks.map((c) => c.audio_chunk!.data!)).equals(counting(0, total))).toBe(true);

      // The service got one message, start and finish, whose data is the TtsRequestProto with the spec.
      expect(received).toEqual([
        {
          dataType: SpeechDataTypes.ttsRequest,
          start: true,
          finish: true,
          request: {
            text: JSON.stringify({ sizes }),
            voice: 'en-us',
            output_audio_spec: { audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 22050, chunk_size_kb: 2 },
          },
        },
      ]);
    });

    it('fills in the default spec; an exact multiple ends on a full last chunk; no audio is one empty first+last chunk', async () => {
      await start();
      const received: { request: { output_audio_spec?: unknown } }[] = [];
      await serve(TTS_TOKEN, piecesService(received));
      const c = client();
      const exact = await synthesize(c, [4096, 4096]);
      expect(exact.map((x) => [x.audio_chunk!.data!.length, Boolean(x.first), Boolean(x.last)])).toEqual([
        [4096, true, false],
        [4096, false, true],
      ]);
      expect(received[0]!.request.output_audio_spec).toEqual({
        audio_encoding: 'LINEAR16_PCM',
        sample_rate_hertz: 16000,
        chunk_size_kb: 4,
      });
      const nothing = await synthesize(c, []);
      expect(nothing.map((x) => [x.audio_chunk?.data?.length ?? 0, Boolean(x.first), Boolean(x.last)])).toEqual([[0, true, true]]);
    });

    it("answers bad requests in-band: key, model, text, rate, chunk size, the service's own refusal, no instance", async () => {
      await start();
      const c = client();
      const noInstance = await caught(() => synthesize(c, [10]));
      expect(noInstance).toMatchObject({ code: 'NO_ACTIVE_INSTANCES', statusCode: 400 });
      await serve(TTS_TOKEN, piecesService([]));

      const badKey = await caught(async () => {
        for await (const _ of c.synthesize({ text: 'x' }, { model: 'tts', authToken: 'nope-nope-nope' })) void _;
      });
      expect(badKey).toMatchObject({ code: 'API_KEY_INVALID', statusCode: 401 });
      const unknown = await caught(async () => {
        for await (const _ of c.synthesize({ text: 'x' }, { model: 'no-such-tts' })) void _;
      });
      expect(unknown).toMatchObject({ code: 'SERVICE_NOT_FOUND', statusCode: 400 });
      const empty = await caught(async () => {
        for await (const _ of c.synthesize({ text: '' }, { model: 'tts' })) void _;
      });
      expect(empty).toMatchObject({ code: 'VALIDATION_FAILED', statusCode: 400 });
      expect(await caught(() => synthesize(c, [10], { sample_rate_hertz: 1000 }))).toMatchObject({
        code: 'PARAMETER_OUT_OF_RANGE',
        statusCode: 400,
      });
      expect(await caught(() => synthesize(c, [10], { chunk_size_kb: 100000 }))).toMatchObject({
        code: 'PARAMETER_OUT_OF_RANGE',
        statusCode: 400,
      });
      const refused = await caught(async () => {
        for await (const _ of c.synthesize({ text: '{"sizes":[1]}', voice: 'refuse' }, { model: 'tts' })) void _;
      });
      expect(refused).toMatchObject({ code: 'platform-action.common.bad-request', statusCode: 400, args: { voice: 'refuse' } });
    });

    it('answers a request without tts, and cancels the service when the caller goes away', async () => {
      await start();
      let aborted = false;
      await serve(TTS_TOKEN, {
        async *partialPredict(input, ctx) {
          ctx.eagerFrames = true;
          ctx.signal.addEventListener('abort', () => (aborted = true));
          for await (const _ of input) void _;
          for (let i = 0; !ctx.signal.aborted && i < 10_000; i++) {
            yield audioPayload(Buffer.alloc(8192, i));
            await new Promise((r) => setTimeout(r, 5));
          }
        },
      });
      const bare: ClientTtsResponseProto[] = await new Promise((resolve, reject) => {
        const got: ClientTtsResponseProto[] = [];
        const call = raw().processSynthesis({ account: 'demo', model: 'tts', authToken: TEST_KEY });
        call.on('data', (m: ClientTtsResponseProto) => got.push(m));
        call.on('end', () => resolve(got));
        call.on('error', reject);
      });
      expect(bare).toEqual([
        {
          error: expect.objectContaining({
            code: 'VALIDATION_FAILED',
            statusCode: 400,
            message: expect.stringContaining('tts is required'),
          }),
          body: 'error',
        },
      ]);

      const controller = new AbortController();
      let received = 0;
      await caught(async () => {
        for await (const chunk of client().synthesize({ text: 'x' }, { model: 'tts', signal: controller.signal })) {
          received += chunk.audio_chunk!.data!.length;
          if (received >= 16384) controller.abort();
        }
      });
      await eventually(() => aborted, 5000, 'the service to get cancel');
      await eventually(() => gw!.gateway.gate.instances(20)[0]?.inFlight === 0, 5000, 'the call to be released');
    });

    it('waits for a paused caller and delivers everything when the backlog stays under the bound', async () => {
      await start({ speechLimits: { maxBufferedBytes: 4 * 1024 * 1024 } });
      let produced = false;
      await serve(TTS_TOKEN, {
        async *partialPredict(input) {
          for await (const _ of input) void _;
          for (let i = 0; i < 32; i++) yield audioPayload(counting(i * 32768, 32768));
          produced = true;
        },
      });
      const call = raw().processSynthesis({
        account: 'demo',
        model: 'tts',
        authToken: TEST_KEY,
        tts: { text: 'x', output_audio_spec: { chunk_size_kb: 1 } },
      });
      call.pause();
      // The caller reads nothing until the service has produced all 1 MiB.
      await eventually(() => produced, 10_000, 'the service to finish');
      const chunks: ClientTtsResponseProto[] = [];
      call.on('data', (m: ClientTtsResponseProto) => chunks.push(m));
      call.resume();
      await new Promise((resolve, reject) => {
        call.on('end', resolve);
        call.on('error', reject);
      });
      expect(chunks.every((m) => m.tts)).toBe(true);
      expect(chunks).toHaveLength(1024);
      expect(Buffer.concat(chunks.map((m) => m.tts!.audio_chunk!.data!)).equals(counting(0, 32 * 32768))).toBe(true);
    });

    it('fails a caller that stops reading once the backlog passes the bound, and cancels the service', async () => {
      await start({ speechLimits: { maxBufferedBytes: 256 * 1024 } });
      let cancelled = false;
      let sent = 0;
      await serve(TTS_TOKEN, {
        async *partialPredict(input, ctx) {
          for await (const _ of input) void _;
          ctx.signal.addEventListener('abort', () => (cancelled = true));
          for (let i = 0; i < 256 && !ctx.signal.aborted; i++) {
            yield audioPayload(Buffer.alloc(65536, i));
            sent += 65536;
          }
        },
      });
      const call = raw().processSynthesis({ account: 'demo', model: 'tts', authToken: TEST_KEY, tts: { text: 'x' } });
      call.pause();
      await eventually(() => cancelled, 10_000, 'the gateway to cancel the flooding service');
      const messages: ClientTtsResponseProto[] = [];
      call.on('data', (m: ClientTtsResponseProto) => messages.push(m));
      call.resume();
      await new Promise((resolve) => {
        call.on('end', resolve);
        call.on('error', resolve);
      });
      const last = messages.at(-1)!;
      expect(last.error).toMatchObject({ code: 'SPEECH_CALLER_TOO_SLOW', statusCode: 408 });
      const delivered = messages.reduce((n, m) => n + (m.tts?.audio_chunk?.data?.length ?? 0), 0);
      expect(sent).toBeLessThan(256 * 65536);
      expect(delivered).toBeLessThan(sent);
      await eventually(() => gw!.gateway.gate.instances(20)[0]?.inFlight === 0, 5000, 'the call to be released');
    });
  });

  describe('recognition', () => {
    interface Seen {
      config?: unknown;
      configType?: string;
      flags: string[];
      dataTypes: Set<string | undefined>;
      audio: Buffer[];
      cancelled: boolean;
    }

    /**
     * Answers each audio message with a tentative result and the end with a final one, whatever the
     * config says: filtering tentative results is the gateway's job. `provider_specific` steers it.
     */
    const countingService = (seen: Seen): ModelHandlers => ({
      async *partialPredict(input, ctx) {
        ctx.eagerFrames = true;
        ctx.signal.addEventListener('abort', () => (seen.cancelled = true));
        let total = 0;
        let mode = '';
        for await (const chunk of input) {
          if (chunk.start) {
            const config = readRecognitionConfig(chunk.config);
            seen.config = config;
            seen.configType = chunk.config?.dataType;
            mode = config?.provider_specific ?? '';
            if (mode === 'refuse') throw ServiceError.badRequest('language xx is not supported');
          }
          seen.flags.push(`${chunk.start ? 'S' : ''}${chunk.finish ? 'F' : ''}${chunk.data.bytes?.length ?? 0}`);
          seen.dataTypes.add(chunk.data.dataType);
          const audio = chunk.data.bytes ?? Buffer.alloc(0);
          seen.audio.push(audio);
          total += audio.length;
          if (mode === 'garbage')
            yield { data: { dataType: SpeechDataTypes.asrResponse, protobuf: Buffer.from([0x0a, 0xff, 0xff, 0xff]) } };
          if (audio.length > 0)
            yield asrResponsePayload({ chunks: [{ alternatives: [{ text: `heard ${total}` }], final: false }], final: false });
        }
        yield asrResponsePayload({
          chunks: [{ alternatives: [{ text: `total ${total}`, confidence: 1 }], final: true, end_of_utterance: true }],
          final: true,
        });
      },
    });
    const newSeen = (): Seen => ({ flags: [], dataTypes: new Set(), audio: [], cancelled: false });

    const recognize = async (c: GateClient, config: Record<string, unknown>, pieces: Buffer[]) => {
      const stream = c.recognize(config, { model: 'asr' });
      for (const piece of pieces) stream.write(piece);
      stream.end();
      const results = [];
      for await (const r of stream) results.push(r);
      return results;
    };

    it('streams config then audio to the service and relays final results only, unless partials are enabled', async () => {
      await start();
      const seen = newSeen();
      await serve(ASR_TOKEN, countingService(seen));
      const pieces = [counting(0, 3200), counting(3200, 3200), counting(6400, 1001)];
      const c = client();

      const finals = await recognize(c, { audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 16000, language_code: 'en-US' }, pieces);
      expect(finals).toHaveLength(1);
      expect(finals[0]).toMatchObject({
        chunks: [{ alternatives: [{ text: 'total 7401', confidence: 1 }], final: true, end_of_utterance: true }],
        final: true,
      });
      expect(seen.configType).toBe(SpeechDataTypes.recognitionConfig);
      expect(seen.config).toEqual({ audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 16000, language_code: 'en-US' });
      // start on the config message (empty audio), audio as it came, finish on an empty-audio message.
      expect(seen.flags).toEqual(['S0', '3200', '3200', '1001', 'F0']);
      expect([...seen.dataTypes]).toEqual([SpeechDataTypes.audio]);
      expect(Buffer.concat(seen.audio).equals(Buffer.concat(pieces))).toBe(true);

      const all = await recognize(c, { audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 16000, enable_partial_results: true }, pieces);
      expect(all.map((r) => [r.chunks![0]!.alternatives![0]!.text, r.chunks![0]!.final ?? false])).toEqual([
        ['heard 3200', false],
        ['heard 6400', false],
        ['heard 7401', false],
        ['total 7401', true],
      ]);
    });

    /** A raw processRecognition call: write these messages, half-close, collect every answer. */
    const rawRecognition = async (
      messages: ClientAsrRequestProto['asr'][],
      address = { account: 'demo', model: 'asr', authToken: TEST_KEY },
    ) => {
      const call = raw().processRecognition();
      const answers: ClientAsrResponseProto[] = [];
      call.on('data', (m: ClientAsrResponseProto) => answers.push(m));
      const ended = new Promise<void>((resolve, reject) => {
        call.on('end', resolve);
        call.on('error', reject);
      });
      for (const asr of messages) call.write({ ...address, asr });
      call.end();
      await ended;
      return answers;
    };

    it('ends with a clear error for audio before config, a second config, a rejected config or no config at all', async () => {
      await start();
      const seen = newSeen();
      await serve(ASR_TOKEN, countingService(seen));
      const audio = counting(0, 640);
      const config = { audio_encoding: 'LINEAR16_PCM' as const, sample_rate_hertz: 16000 };

      const first = await rawRecognition([{ audio_content: audio }, { config }]);
      expect(first).toHaveLength(1);
      expect(first[0]!.error).toMatchObject({ code: 'SPEECH_CONFIG_REQUIRED', statusCode: 400, args: { got: 'audio_content' } });

      const twice = await rawRecognition([{ config }, { audio_content: audio }, { config }, { audio_content: audio }]);
      expect(twice.at(-1)!.error).toMatchObject({ code: 'SPEECH_CONFIG_REPEATED', statusCode: 400 });
      expect(twice.filter((m) => m.error)).toHaveLength(1);
      await eventually(() => seen.cancelled, 5000, 'the service to get cancel');

      for (const encoding of ['OGG_OPUS', 'MP3', 'MULAW', 'ALAW', 'FLAC'] as const) {
        const bad = await rawRecognition([{ config: { audio_encoding: encoding, sample_rate_hertz: 16000 } }, { audio_content: audio }]);
        expect(bad).toHaveLength(1);
        expect(bad[0]!.error).toMatchObject({
          code: 'AUDIO_FORMAT_UNSUPPORTED',
          statusCode: 400,
          args: { reason: expect.stringContaining(encoding) },
        });
      }
      const rate = await rawRecognition([{ config: { audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 1 } }]);
      expect(rate[0]!.error).toMatchObject({ code: 'PARAMETER_OUT_OF_RANGE', args: { param: 'asr.config.sample_rate_hertz' } });

      const nothing = await rawRecognition([]);
      expect(nothing).toHaveLength(1);
      expect(nothing[0]!.error).toMatchObject({ code: 'SPEECH_CONFIG_REQUIRED', args: { got: 'the end of the stream' } });

      const badKey = await rawRecognition([{ config }], { account: 'demo', model: 'asr', authToken: '' });
      expect(badKey[0]!.error).toMatchObject({ code: 'API_KEY_MISSING', statusCode: 401 });
      const unknown = await rawRecognition([{ config }], { account: 'demo', model: 'nope', authToken: TEST_KEY });
      expect(unknown[0]!.error).toMatchObject({ code: 'SERVICE_NOT_FOUND', statusCode: 400 });
      // Only the well-formed streams reached the service: one with a second config (then cancelled).
      expect(seen.flags.filter((f) => f.startsWith('S'))).toHaveLength(1);
    });

    it("passes the service's refusal and a garbled result on as errors", async () => {
      await start();
      await serve(ASR_TOKEN, countingService(newSeen()));
      const c = client();
      const refused = await caught(() => recognize(c, { provider_specific: 'refuse' }, [counting(0, 10)]));
      expect(refused).toMatchObject({
        code: 'platform-action.common.bad-request',
        statusCode: 400,
        message: 'language xx is not supported',
      });
      const garbled = await caught(() => recognize(c, { provider_specific: 'garbage' }, [counting(0, 10)]));
      expect(garbled).toMatchObject({ code: 'SERVICE_BAD_RESPONSE', statusCode: 502 });
    });

    it('cancels the service when the caller goes away mid-stream', async () => {
      await start();
      const seen = newSeen();
      await serve(ASR_TOKEN, countingService(seen));
      const stream = client().recognize({ enable_partial_results: true }, { model: 'asr' });
      stream.write(counting(0, 320));
      const iterator = stream[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toMatchObject({ chunks: [{ alternatives: [{ text: 'heard 320' }] }] });
      stream.cancel();
      await eventually(() => seen.cancelled, 5000, 'the service to get cancel');
      await eventually(() => gw!.gateway.gate.instances(21)[0]?.inFlight === 0, 5000, 'the call to be released');
    });

    it('decodes the config it sends with the proto (a service in another language reads the same bytes)', async () => {
      await start();
      let bytes: Buffer | undefined;
      await serve(ASR_TOKEN, {
        async *partialPredict(input) {
          for await (const chunk of input) if (chunk.start) bytes = chunk.config?.bytes;
          yield asrResponsePayload({ chunks: [], final: true });
        },
      });
      await recognize(client(), { sample_rate_hertz: 8000, enable_single_utterance: true, model: 'command' }, []);
      expect(decodeRecognitionConfig(bytes!)).toEqual({
        audio_encoding: 'LINEAR16_PCM',
        sample_rate_hertz: 8000,
        enable_single_utterance: true,
        model: 'command',
      });
    });
  });
});
