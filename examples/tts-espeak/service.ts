import {
  LinearResampler,
  ServiceError,
  SpeechDataTypes,
  audioPayload,
  readTtsRequest,
  type ModelHandlers,
  type ServiceDescriptor,
} from '@model-gateway/sdk';
import { EspeakInputError, speak } from './espeak.js';

export interface TtsServiceOptions {
  /** The espeak-ng executable; default `espeak-ng` on PATH. */
  binary?: string;
  /** Voice when the request names none; default `en-us`. */
  defaultVoice?: string;
}

/**
 * OpenAI's voice names, so that `audio.speech.create({voice: 'alloy'})` through the HTTP bridge
 * works: each picks an espeak-ng voice and variant. Any espeak-ng voice name is accepted as well.
 */
export const OPENAI_VOICES: Readonly<Record<string, string>> = {
  alloy: 'en-us',
  ash: 'en-us+m3',
  ballad: 'en-gb+m2',
  coral: 'en-us+f3',
  echo: 'en-us+m7',
  fable: 'en-gb-x-rp',
  nova: 'en-us+f2',
  onyx: 'en-us+m1',
  sage: 'en-us+f4',
  shimmer: 'en-us+f5',
  verse: 'en-us+m4',
};

/** espeak-ng voice names: language tags and file names, with an optional `+variant`. */
const VOICE = /^[A-Za-z0-9_-]{1,40}(\+[A-Za-z0-9_-]{1,40})?$/;

export const TTS_DESCRIPTOR: ServiceDescriptor = {
  name: 'tts-espeak',
  methods: {
    partialPredict: { input: { data: { type: SpeechDataTypes.ttsRequest } }, output: { type: SpeechDataTypes.audio } },
  },
};

/**
 * Text to speech with espeak-ng, streamed: the audio of a TtsRequestProto goes back while espeak-ng
 * is still speaking, resampled from espeak-ng's 22 050 Hz to the requested rate.
 */
export function createTtsHandlers(options: TtsServiceOptions = {}): ModelHandlers {
  const binary = options.binary ?? 'espeak-ng';
  const defaultVoice = options.defaultVoice ?? 'en-us';
  return {
    async *partialPredict(input, ctx) {
      // Audio leaves as soon as it is made, not one piece late.
      ctx.eagerFrames = true;
      let request;
      for await (const chunk of input) {
        request ??= readTtsRequest(chunk.data);
      }
      if (!request) throw ServiceError.badRequest('the synthesis request is empty');
      const text = request.text ?? '';
      if (!text.trim()) throw ServiceError.badRequest('text is empty');
      const rate = request.output_audio_spec?.sample_rate_hertz || 16_000;
      const asked = request.voice || defaultVoice;
      const voice = OPENAI_VOICES[asked.toLowerCase()] ?? asked;
      if (!VOICE.test(voice)) throw ServiceError.badRequest(`voice '${asked}' is not an espeak-ng voice name`, { voice: asked });

      let resampler: LinearResampler | undefined;
      try {
        for await (const item of speak(text, { binary, voice, signal: ctx.signal })) {
          if (!Buffer.isBuffer(item)) {
            if (item.channels !== 1) throw new Error(`espeak-ng produced ${item.channels} channels`);
            resampler = new LinearResampler(item.sampleRate, rate);
            continue;
          }
          const pcm = resampler!.push(item);
          if (pcm.length > 0) yield audioPayload(pcm);
        }
      } catch (err) {
        if (err instanceof EspeakInputError) throw ServiceError.badRequest(err.message, { voice: asked });
        throw err;
      }
    },
  };
}
