import type { ServiceEntry } from '../admission/directory.js';
import type { Gate, OpenOptions } from '../gate/gate.js';
import type { RecognitionConfig, TtsRequestProto } from '../../proto/src/index.js';
import { DEFAULT_SPEECH_LIMITS, type SpeechLimits } from './limits.js';
import { checkRecognitionConfig, openRecognition, type RecognitionOptions, type RecognitionStream } from './recognition.js';
import { checkSynthesisRequest, openSynthesis, type SynthesisRequest, type SynthesisStream } from './synthesis.js';

/**
 * Speech over the model-service stream, for the gRPC speech calls and the HTTP bridges alike. Any
 * service that handles partialPredict can serve speech; the data types are in `SpeechDataTypes`.
 *
 * @example
 * const bridge = new SpeechBridge(ctx.gate);
 * const request = bridge.checkSynthesis({ text: 'hello', output_audio_spec: { sample_rate_hertz: 24000 } });
 * for await (const chunk of bridge.synthesize(service, request, { headers, signal })) res.write(chunk.data);
 */
export class SpeechBridge {
  readonly limits: Readonly<SpeechLimits>;
  readonly #gate: Gate;

  constructor(gate: Gate, limits: Partial<SpeechLimits> = {}) {
    this.#gate = gate;
    this.limits = Object.freeze({ ...DEFAULT_SPEECH_LIMITS, ...limits });
  }

  /** A checked synthesis request with its output spec completed; 400 naming the field otherwise. */
  checkSynthesis(tts: TtsRequestProto | undefined, param = 'tts'): SynthesisRequest {
    return checkSynthesisRequest(tts, this.limits, param);
  }

  /** Starts synthesis; iterate the result for audio chunks of the requested size. */
  synthesize(service: ServiceEntry, request: SynthesisRequest, options: OpenOptions = {}): SynthesisStream {
    return openSynthesis(this.#gate, service, request, options, this.limits);
  }

  /** A checked RecognitionConfig with encoding and rate filled in; 400 naming the field otherwise. */
  checkRecognition(config: RecognitionConfig, param = 'asr.config'): RecognitionConfig {
    return checkRecognitionConfig(config, this.limits, param);
  }

  /** Starts recognition; send audio, then `end()`, and iterate the result for recognition results. */
  recognize(service: ServiceEntry, config: RecognitionConfig, options: Partial<RecognitionOptions> = {}): RecognitionStream {
    const answerTimeoutMs = options.answerTimeoutMs ?? (service.timeoutSec ?? this.#gate.defaultTimeoutSec) * 1000;
    return openRecognition(this.#gate, service, config, { ...options, answerTimeoutMs }, this.limits);
  }
}
