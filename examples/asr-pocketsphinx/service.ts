import {
  LinearResampler,
  ServiceError,
  SpeechDataTypes,
  asrResponsePayload,
  readRecognitionConfig,
  type ModelHandlers,
  type PartialPredictChunk,
  type ServiceDescriptor,
} from '@model-gateway/sdk';
import { availableParallelism } from 'node:os';
import { Recognizer, RecognizerInputError, type RecognizerEvent } from './recognizer.js';

/** The acoustic model's rate: audio at any other rate is resampled to it. */
const MODEL_RATE = 16_000;

export interface AsrServiceOptions {
  /** Python with the pocketsphinx bindings; default /usr/bin/python3 (Debian's python3-pocketsphinx). */
  python?: string;
  /** pocketsphinx model folder; default Debian's /usr/share/pocketsphinx/model/en-us. */
  modelDir?: string;
  /**
   * Recognizers (pocketsphinx processes) running at once; default twice the cores. A stream past it
   * is refused at once with 503 `asr.busy`: each recognizer is a process holding its model, and 200
   * of them starved this service's own heartbeats until the gateway dropped it for everyone.
   */
  maxRecognizers?: number;
}

/** The service's answer when every recognizer is taken: retry shortly. */
export const ASR_BUSY = 'asr.busy';

export const ASR_DESCRIPTOR: ServiceDescriptor = {
  name: 'asr-pocketsphinx',
  methods: {
    partialPredict: {
      input: { data: { type: SpeechDataTypes.audio }, config: { type: SpeechDataTypes.recognitionConfig } },
      output: { type: SpeechDataTypes.asrResponse },
    },
  },
};

/** What `RecognitionConfig.provider_specific` may hold (JSON): a grammar to recognize with. */
interface ProviderSpecific {
  /** Recognize only these phrases: the result is always one of them. */
  phrases?: string[];
  /** A JSGF grammar (text). */
  jsgf?: string;
}

/**
 * Streaming speech recognition with pocketsphinx (US English). Audio is fed to the recognizer as it
 * arrives; each utterance (cut at a pause) comes back as a final result, and with
 * `enable_partial_results` the growing hypothesis comes back as tentative results meanwhile.
 */
export function createAsrHandlers(options: AsrServiceOptions = {}): ModelHandlers {
  const python = options.python ?? '/usr/bin/python3';
  const maxRecognizers = options.maxRecognizers ?? 2 * availableParallelism();
  let running = 0;
  return {
    async *partialPredict(input, ctx) {
      // Each result leaves when it is known: a final result must not wait for the next utterance.
      ctx.eagerFrames = true;
      const messages = input[Symbol.asyncIterator]();
      const first = await messages.next();
      if (first.done) throw ServiceError.badRequest('the recognition stream is empty');
      const config = readRecognitionConfig(first.value.config);
      if (!config) throw ServiceError.badRequest('the first message carries no RecognitionConfig');
      const encoding = config.audio_encoding ?? 'AUDIO_ENCODING_UNSPECIFIED';
      if (encoding !== 'LINEAR16_PCM' && encoding !== 'AUDIO_ENCODING_UNSPECIFIED') {
        throw ServiceError.badRequest(`audio encoding ${encoding} is not supported; send LINEAR16_PCM`);
      }
      const language = config.language_code || 'en-US';
      if (!/^en(-|_|$)/i.test(language))
        throw ServiceError.badRequest(`language ${language} is not supported; this model is en-US`, { language });
      const grammar = providerSpecific(config.provider_specific);
      const resampler = new LinearResampler(config.sample_rate_hertz || MODEL_RATE, MODEL_RATE);
      const singleUtterance = config.enable_single_utterance === true;

      if (running >= maxRecognizers) {
        throw new ServiceError(ASR_BUSY, `all ${maxRecognizers} recognizers are busy; retry shortly`, 503, {
          limit: String(maxRecognizers),
        });
      }
      const recognizer = new Recognizer({
        python,
        modelDir: options.modelDir,
        partial: config.enable_partial_results === true,
        ...grammar,
        signal: ctx.signal,
      });
      // The slot is the recognizer's: taken once its process exists, freed when it is killed.
      running++;
      const feed = async () => {
        await recognizer.write(resampler.push(first.value.data.bytes ?? Buffer.alloc(0)));
        for (let next = await messages.next(); !next.done; next = await messages.next()) {
          await recognizer.write(resampler.push(audioOf(next.value)));
        }
        recognizer.end();
      };
      const feeding = feed().catch((err: unknown) => {
        recognizer.kill();
        throw err;
      });
      feeding.catch(() => {}); // awaited below

      try {
        for await (const event of recognizer.events()) {
          yield asrResponsePayload(toAsrResponse(event));
          if (singleUtterance && event.type === 'final') {
            recognizer.kill();
            return;
          }
        }
        await feeding;
      } catch (err) {
        if (err instanceof RecognizerInputError) throw ServiceError.badRequest(err.message);
        throw err;
      } finally {
        recognizer.kill();
        running--;
      }
    },
  };
}

function audioOf(chunk: PartialPredictChunk): Buffer {
  if (chunk.data.kind === 'json') throw ServiceError.badRequest(`audio must be raw bytes (${SpeechDataTypes.audio}), not JSON`);
  return chunk.data.bytes ?? Buffer.alloc(0);
}

function providerSpecific(text: string | undefined): ProviderSpecific {
  if (!text) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw ServiceError.badRequest('provider_specific must be JSON: {"phrases": [...]} or {"jsgf": "..."}');
  }
  const { phrases, jsgf } = (value ?? {}) as ProviderSpecific;
  if (phrases !== undefined && (!Array.isArray(phrases) || !phrases.every((p) => typeof p === 'string'))) {
    throw ServiceError.badRequest('provider_specific.phrases must be a list of strings');
  }
  if (jsgf !== undefined && typeof jsgf !== 'string') throw ServiceError.badRequest('provider_specific.jsgf must be a string');
  return { ...(phrases ? { phrases } : {}), ...(jsgf ? { jsgf } : {}) };
}

const duration = (seconds: number) => ({ seconds: Math.floor(seconds), nanos: Math.round((seconds - Math.floor(seconds)) * 1e9) });

function toAsrResponse(event: Exclude<RecognizerEvent, { type: 'error' }>) {
  if (event.type === 'partial') {
    return { chunks: [{ alternatives: [{ text: event.text }], final: false, end_of_utterance: false }], final: false };
  }
  return {
    chunks: [
      {
        alternatives: [
          {
            text: event.text,
            confidence: event.confidence,
            words: event.words.map((w) => ({
              word: w.word,
              start_time: duration(w.start),
              end_time: duration(w.end),
              confidence: w.confidence,
            })),
          },
        ],
        final: true,
        end_of_utterance: true,
      },
    ],
    final: true,
  };
}
