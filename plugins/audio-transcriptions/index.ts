/**
 * OpenAI-compatible transcription: `POST /api/adapters/chatapi/audio/transcriptions` (also under
 * `/v1/`), multipart with `file` (WAV, 16-bit PCM, any rate, channels mixed down), `model`
 * (`<author>/<service>`), optional `language` and `response_format` (`json` or `text`). The audio is
 * streamed to the ASR service that `model` names through the speech bridge; the transcript is the
 * final results joined. The bridge's own form field `provider_specific` is passed on as
 * RecognitionConfig.provider_specific (the pocketsphinx example reads a phrase list from it).
 */
import {
  SpeechBridge,
  WavFormatError,
  compileRequestSchema,
  definePlugin,
  gatewayError,
  readWav,
  type RecognitionConfig,
} from '../../core/plugins/index.js';
import { audioRequest, openAiRoute } from '../_shared/speech/openai.js';
import { readMultipart } from './multipart.js';

export interface AudioTranscriptionsOptions {
  /** Largest upload; default: the gateway's `server.bodyLimitBytes`. */
  maxFileBytes?: number;
  /** Audio is sent to the service in pieces of this size. */
  chunkBytes: number;
}

interface TranscriptionFields {
  model: string;
  language?: string;
  response_format?: 'json' | 'text';
  prompt?: string;
  temperature?: string;
  provider_specific?: string;
  stream?: 'false';
}

export default definePlugin<AudioTranscriptionsOptions>({
  name: 'audio-transcriptions',
  description: 'OpenAI-compatible POST /api/adapters/chatapi/audio/transcriptions through an ASR service',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      maxFileBytes: { type: 'integer', minimum: 1024 },
      chunkBytes: { type: 'integer', minimum: 1024, maximum: 4 * 1024 * 1024, default: 32 * 1024 },
    },
  },
  routes(router, ctx) {
    const bridge = new SpeechBridge(ctx.gate);
    const fileBytes = ctx.options.maxFileBytes ?? ctx.config.server.bodyLimitBytes;
    const readFields = compileRequestSchema<TranscriptionFields>({
      type: 'object',
      required: ['model'],
      properties: {
        model: { type: 'string', minLength: 1 },
        language: { type: 'string', pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$' },
        response_format: { enum: ['json', 'text'] },
        prompt: { type: 'string' },
        temperature: { type: 'string' },
        provider_specific: { type: 'string' },
        // Streamed transcription events are not offered.
        stream: { enum: ['false'] },
      },
    });

    // A recognition holds one of the account's stream slots until its response is closed.
    const admission = audioRequest(
      ctx,
      (koa) => readMultipart(koa, 'file', { fileBytes, fieldBytes: 64 * 1024, fields: 32 }),
      (form) => {
        const fields = readFields(form.fields);
        if (!form.file) throw gatewayError('VALIDATION_FAILED', { param: 'file', args: { reason: 'the multipart body has no file part' } });
        return { file: form.file, fields };
      },
      (body) => body.fields.model,
    );
    router.post(
      openAiRoute('audio/transcriptions'),
      ctx.admission.request(admission, async (koa, { caller, body: { file, fields }, target: { service } }) => {
        let audio;
        try {
          audio = readWav(file.data);
        } catch (err) {
          if (!(err instanceof WavFormatError)) throw err;
          throw gatewayError('AUDIO_FORMAT_UNSUPPORTED', {
            param: 'file',
            args: { reason: `${err.message}; send a WAV file of 16-bit PCM` },
          });
        }
        const config: RecognitionConfig = bridge.checkRecognition(
          {
            audio_encoding: 'LINEAR16_PCM',
            sample_rate_hertz: audio.sampleRate,
            ...(fields.language ? { language_code: fields.language } : {}),
            ...(fields.provider_specific ? { provider_specific: fields.provider_specific } : {}),
          },
          'file',
        );

        const recognition = bridge.recognize(service, config, {
          context: ctx.http.callContext(koa, caller, service),
          signal: ctx.http.closeSignal(koa),
        });
        const texts: string[] = [];
        const collect = (async () => {
          for await (const result of recognition) {
            for (const chunk of result.chunks ?? []) {
              const text = chunk.final ? chunk.alternatives?.[0]?.text?.trim() : undefined;
              if (text) texts.push(text);
            }
          }
        })();
        for (let offset = 0; offset < audio.pcm.length; offset += ctx.options.chunkBytes) {
          recognition.sendAudio(audio.pcm.subarray(offset, offset + ctx.options.chunkBytes));
          await recognition.whenWritable();
        }
        recognition.end();
        await collect;

        const text = texts.join(' ');
        if (fields.response_format === 'text') {
          koa.type = 'text/plain; charset=utf-8';
          koa.body = text;
        } else {
          koa.body = { text };
        }
      }),
    );
  },
});
