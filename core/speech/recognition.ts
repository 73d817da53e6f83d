import type { ServiceEntry } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import type { Gate, OpenOptions } from '../gate/gate.js';
import type { AsrResponseProto, RecognitionConfig } from '../../proto/src/index.js';
import type { ServiceAnswer, ServiceCall } from '../gate/service-call.js';
import { BoundedQueue, pumpInto } from './bounded-queue.js';
import { asrResponseFromJson, audioPayload, decodeAsrResponse, encodeRecognitionConfig, SpeechDataTypes } from '../../proto/src/index.js';
import type { SpeechLimits } from './limits.js';

/** The encodings the bridge carries: audio goes to the service as raw 16-bit PCM. */
const SUPPORTED_ENCODINGS = new Set(['LINEAR16_PCM', 'AUDIO_ENCODING_UNSPECIFIED']);

/**
 * Checks a RecognitionConfig: LINEAR16_PCM only (AUDIO_ENCODING_UNSPECIFIED is taken as LINEAR16_PCM),
 * a sample rate within bounds (0 means the default). Returns the config with both filled in.
 */
export function checkRecognitionConfig(config: RecognitionConfig, limits: SpeechLimits, param = 'asr.config'): RecognitionConfig {
  const encoding = config.audio_encoding ?? 'AUDIO_ENCODING_UNSPECIFIED';
  if (!SUPPORTED_ENCODINGS.has(encoding)) {
    throw gatewayError('AUDIO_FORMAT_UNSUPPORTED', {
      param: `${param}.audio_encoding`,
      args: { reason: `encoding ${encoding}; send LINEAR16_PCM (16-bit little-endian PCM)` },
    });
  }
  const rate = config.sample_rate_hertz || limits.defaultRecognitionRateHertz;
  if (!Number.isInteger(rate) || rate < limits.minSampleRateHertz || rate > limits.maxSampleRateHertz) {
    throw gatewayError('PARAMETER_OUT_OF_RANGE', {
      param: `${param}.sample_rate_hertz`,
      args: {
        param: `${param}.sample_rate_hertz`,
        reason: `must be between ${limits.minSampleRateHertz} and ${limits.maxSampleRateHertz}, got ${rate}`,
      },
    });
  }
  if (config.audio_channel_count !== undefined && config.audio_channel_count > 1) {
    throw gatewayError('AUDIO_FORMAT_UNSUPPORTED', {
      param: `${param}.audio_channel_count`,
      args: { reason: `${config.audio_channel_count} channels; streaming recognition takes mono audio` },
    });
  }
  return { ...config, audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: rate };
}

export interface RecognitionOptions extends OpenOptions {
  /** How long the service has to finish after the last audio; the whole stream has no deadline. */
  answerTimeoutMs: number;
}

/**
 * Opens recognition at `service`: the first partialPredict carries the RecognitionConfig as `config`
 * and `start`, with empty audio as data (SDKs drop data-less messages); then one message per audio
 * chunk; then an empty-audio message with `finish`. Every message has data.
 */
export function openRecognition(
  gate: Gate,
  service: ServiceEntry,
  config: RecognitionConfig,
  options: RecognitionOptions,
  limits: SpeechLimits,
): RecognitionStream {
  const call = gate.open(
    service,
    {
      partialPredict: {
        config: { dataType: SpeechDataTypes.recognitionConfig, protobuf: encodeRecognitionConfig(config) },
        data: audioPayload(Buffer.alloc(0)),
        start: true,
      },
    },
    { ...options, timeoutMs: 0 },
  );
  return new RecognitionStream(call, service, config.enable_partial_results === true, options.answerTimeoutMs, limits.maxBufferedBytes);
}

/**
 * One recognition in flight: audio goes in with `sendAudio` and `end`; results come out as an async
 * iterable of AsrResponseProto. Tentative results (chunks with `final` false) are dropped unless the
 * config enabled partial results, whatever the service sends.
 */
export class RecognitionStream implements AsyncIterable<AsrResponseProto> {
  readonly #call: ServiceCall;
  readonly #queue: BoundedQueue<AsrResponseProto>;
  readonly #service: ServiceEntry;
  readonly #partials: boolean;
  readonly #answerTimeoutMs: number;
  #ended = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(call: ServiceCall, service: ServiceEntry, partials: boolean, answerTimeoutMs: number, limitBytes: number) {
    this.#call = call;
    this.#service = service;
    this.#partials = partials;
    this.#answerTimeoutMs = answerTimeoutMs;
    this.#queue = new BoundedQueue(limitBytes);
    void this.#pump();
  }

  get failedSignal(): AbortSignal {
    return this.#queue.failedSignal;
  }

  sendAudio(audio: Uint8Array): void {
    if (this.#ended || audio.length === 0) return;
    this.#call.send({ data: audioPayload(audio) });
  }

  /** Resolves when more audio can be sent without piling up in the gateway. */
  whenWritable(): Promise<void> {
    return this.#call.whenWritable();
  }

  /** No more audio: tells the service and starts the deadline for its last results. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#call.send({ data: audioPayload(Buffer.alloc(0)), finish: true });
    if (this.#answerTimeoutMs > 0 && !this.#call.settled) {
      this.#timer = setTimeout(() => {
        this.cancel(gatewayError('PREDICT_TIMEOUT', { args: { service: this.#service.name, timeoutSec: this.#answerTimeoutMs / 1000 } }));
      }, this.#answerTimeoutMs);
      this.#timer.unref();
    }
  }

  cancel(error = gatewayError('REQUEST_CANCELED')): void {
    this.#ended = true;
    this.#call.cancel(error);
    this.#queue.fail(error, true);
  }

  async #pump(): Promise<void> {
    try {
      await pumpInto(
        this.#call,
        this.#queue,
        (answer) => {
          const decoded = resultOf(answer, this.#service.name);
          const response = decoded && (this.#partials ? decoded.response : finalOnly(decoded.response));
          return response ? { item: response, size: decoded.size } : undefined;
        },
        (error) => this.cancel(error),
      );
    } finally {
      this.#ended = true;
      if (this.#timer) clearTimeout(this.#timer);
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<AsrResponseProto> {
    let completed = false;
    try {
      yield* this.#queue;
      completed = true;
    } finally {
      if (!completed) this.cancel();
    }
  }
}

/** The AsrResponseProto of one answer frame (protobuf, or JSON with the proto's field names). */
function resultOf(answer: ServiceAnswer, serviceName: string): { response: AsrResponseProto; size: number } | undefined {
  const payload =
    answer.body === 'partialPredict' ? answer.partialPredict?.data : answer.body === 'predict' ? answer.predict?.data : undefined;
  if (!payload) return undefined;
  const bad = (reason: string) => gatewayError('SERVICE_BAD_RESPONSE', { args: { service: serviceName, reason } });
  if (payload.protobuf !== undefined) {
    if (payload.protobuf.length === 0) return undefined;
    if (payload.dataType && payload.dataType !== SpeechDataTypes.asrResponse) {
      throw bad(`a recognition result has dataType '${payload.dataType}', expected '${SpeechDataTypes.asrResponse}'`);
    }
    try {
      return { response: decodeAsrResponse(payload.protobuf), size: payload.protobuf.length };
    } catch (err) {
      throw bad(`a recognition result is not an AsrResponseProto: ${(err as Error).message}`);
    }
  }
  if (payload.json !== undefined) {
    try {
      return { response: asrResponseFromJson(payload.json), size: payload.json.length };
    } catch (err) {
      throw bad(`a JSON recognition result is not an AsrResponseProto: ${(err as Error).message}`);
    }
  }
  return undefined;
}

/** The response without its tentative chunks; undefined when nothing final is left. */
function finalOnly(response: AsrResponseProto): AsrResponseProto | undefined {
  const chunks = (response.chunks ?? []).filter((chunk) => chunk.final === true);
  if (chunks.length === 0) return undefined;
  return { ...response, chunks, final: true };
}
