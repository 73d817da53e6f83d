/**
 * OpenAI-compatible speech synthesis: `POST /api/adapters/chatapi/audio/speech` (also under `/v1/`),
 * bridged onto the TTS service that `model` (`<author>/<service>`) names. The audio is streamed to the
 * caller as the service produces it, with chunked transfer encoding: WAV with a header of unknown
 * length up front, or raw PCM; 16-bit mono little-endian at `sampleRateHertz` (24 kHz, as OpenAI's).
 */
import { PassThrough } from 'node:stream';
import {
  GatewayError,
  SpeechBridge,
  compileRequestSchema,
  definePlugin,
  drained,
  gatewayError,
  wavHeader,
  type AudioChunkOut,
} from '../../core/plugins/index.js';
import { audioRequest, openAiRoute } from '../_shared/speech/openai.js';

export interface AudioSpeechOptions {
  /** Rate of the audio returned (OpenAI's `pcm` is 24 kHz). */
  sampleRateHertz: number;
  /** Size of the pieces asked from the service and written to the caller. */
  chunkSizeKb: number;
  /** Longest `input`, in characters (OpenAI's limit is 4096). */
  maxInputChars: number;
  /** Bytes held for a caller that does not read before the response is cut. */
  maxBufferedBytes: number;
}

interface SpeechBody {
  model: string;
  input: string;
  voice?: string | { id: string };
  response_format?: 'wav' | 'pcm';
  speed?: number;
  instructions?: string;
  stream_format?: 'audio';
}

const CONTENT_TYPES = { wav: 'audio/wav', pcm: 'audio/pcm' } as const;

export default definePlugin<AudioSpeechOptions>({
  name: 'audio-speech',
  description: 'OpenAI-compatible POST /api/adapters/chatapi/audio/speech, streamed from a TTS service',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      sampleRateHertz: { type: 'integer', minimum: 8000, maximum: 48000, default: 24000 },
      chunkSizeKb: { type: 'integer', minimum: 1, maximum: 1024, default: 4 },
      maxInputChars: { type: 'integer', minimum: 1, maximum: 100000, default: 4096 },
      maxBufferedBytes: { type: 'integer', minimum: 65536, default: 16 * 1024 * 1024 },
    },
  },
  routes(router, ctx) {
    const { sampleRateHertz, chunkSizeKb, maxInputChars, maxBufferedBytes } = ctx.options;
    const bridge = new SpeechBridge(ctx.gate, { maxTextChars: maxInputChars, maxBufferedBytes });
    const readBody = compileRequestSchema<SpeechBody>({
      type: 'object',
      required: ['model', 'input'],
      additionalProperties: false,
      properties: {
        model: { type: 'string', minLength: 1 },
        input: { type: 'string', minLength: 1, maxLength: maxInputChars },
        voice: {
          oneOf: [
            { type: 'string', minLength: 1, maxLength: 100 },
            {
              type: 'object',
              required: ['id'],
              additionalProperties: false,
              properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
            },
          ],
        },
        response_format: { enum: ['wav', 'pcm'] },
        // Accepted for compatibility; the TtsRequestProto has no place for them.
        speed: { type: 'number', minimum: 0.25, maximum: 4 },
        instructions: { type: 'string', maxLength: 4096 },
        stream_format: { enum: ['audio'] },
      },
    });

    // A synthesis holds one of the account's stream slots until its response is closed.
    const admission = audioRequest(
      ctx,
      (koa) => ctx.http.readJson(koa),
      readBody,
      (body) => body.model,
    );
    router.post(
      openAiRoute('audio/speech'),
      ctx.admission.request(admission, async (koa, { caller, body, target: { service } }) => {
        const format = body.response_format ?? 'wav';
        const voice = typeof body.voice === 'object' ? body.voice.id : body.voice;
        const request = bridge.checkSynthesis(
          {
            text: body.input,
            ...(voice ? { voice } : {}),
            output_audio_spec: { audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: sampleRateHertz, chunk_size_kb: chunkSizeKb },
          },
          'input',
        );
        const signal = ctx.http.closeSignal(koa);
        const stream = bridge.synthesize(service, request, { context: ctx.http.callContext(koa, caller, service), signal });
        const chunks = stream[Symbol.asyncIterator]();

        // Nothing is sent before the first audio: a service that refuses the request (an unknown
        // voice) still gets its own status. After that, audio goes out as it comes.
        const first = await chunks.next();
        const out = new PassThrough();
        koa.status = 200;
        koa.type = CONTENT_TYPES[format];
        koa.set('Cache-Control', 'no-store');
        koa.body = out;
        if (format === 'wav') out.write(wavHeader(sampleRateHertz));
        void relay(out, first, chunks, [signal, stream.failedSignal], (err) => {
          // The status is gone: cutting the connection is the only way to say the audio is incomplete.
          ctx.logger.warn({ requestId: koa.state.requestId, code: err.code, err: err.message }, 'speech stream failed after its start');
          koa.res.destroy(err);
        });
      }),
    );
  },
});

/** Writes the chunks to `out`, waiting for 'drain' whenever it is full; ends it after the last. */
async function relay(
  out: PassThrough,
  first: IteratorResult<AudioChunkOut>,
  rest: AsyncIterator<AudioChunkOut>,
  signals: AbortSignal[],
  onError: (err: GatewayError) => void,
): Promise<void> {
  try {
    for (let next = first; !next.done; next = await rest.next()) {
      if (signals[0]?.aborted) {
        // The caller went away: stop reading (the service already got `cancel` through the signal).
        void rest.return?.();
        return;
      }
      if (next.value.data.length > 0 && !out.write(next.value.data)) await drained(out, signals);
    }
    out.end();
  } catch (err) {
    onError(err instanceof GatewayError ? err : gatewayError('INTERNAL_ERROR', { cause: err }));
  }
}
