import type { ServiceEntry } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import type { Gate, OpenOptions } from '../gate/gate.js';
import type { TtsRequestProto } from '../../proto/src/index.js';
import type { ServiceAnswer, ServiceCall } from '../gate/service-call.js';
import { BoundedQueue, pumpInto } from './bounded-queue.js';
import { encodeTtsRequest, SpeechDataTypes } from '../../proto/src/index.js';
import type { SpeechLimits } from './limits.js';

/** A synthesis request after the gateway's checks: the output spec is always complete. */
export interface SynthesisRequest extends TtsRequestProto {
  text: string;
  output_audio_spec: { audio_encoding: 'LINEAR16_PCM'; sample_rate_hertz: number; chunk_size_kb: number };
}

/** One chunk of synthesized audio as the caller gets it. */
export interface AudioChunkOut {
  data: Buffer;
  first: boolean;
  last: boolean;
}

/**
 * Checks a TtsRequestProto and fills in the output spec's defaults. `param` prefixes the field names
 * in errors (`tts.text`).
 */
export function checkSynthesisRequest(tts: TtsRequestProto | undefined, limits: SpeechLimits, param = 'tts'): SynthesisRequest {
  if (!tts) throw gatewayError('VALIDATION_FAILED', { param, args: { reason: `${param} is required` } });
  const text = tts.text ?? '';
  if (text.trim() === '') throw gatewayError('VALIDATION_FAILED', { param: `${param}.text`, args: { reason: `${param}.text is empty` } });
  if (text.length > limits.maxTextChars) {
    throw gatewayError('PARAMETER_OUT_OF_RANGE', {
      param: `${param}.text`,
      args: { param: `${param}.text`, reason: `must be at most ${limits.maxTextChars} characters long, got ${text.length}` },
    });
  }
  const spec = tts.output_audio_spec ?? {};
  const specParam = `${param}.output_audio_spec`;
  if (spec.audio_encoding !== undefined && spec.audio_encoding !== 'LINEAR16_PCM') {
    throw gatewayError('AUDIO_FORMAT_UNSUPPORTED', {
      param: `${specParam}.audio_encoding`,
      args: { reason: `encoding ${String(spec.audio_encoding)}; synthesis produces LINEAR16_PCM` },
    });
  }
  const rate = spec.sample_rate_hertz || limits.defaultSampleRateHertz;
  if (!Number.isInteger(rate) || rate < limits.minSampleRateHertz || rate > limits.maxSampleRateHertz) {
    throw gatewayError('PARAMETER_OUT_OF_RANGE', {
      param: `${specParam}.sample_rate_hertz`,
      args: {
        param: `${specParam}.sample_rate_hertz`,
        reason: `must be between ${limits.minSampleRateHertz} and ${limits.maxSampleRateHertz}, got ${rate}`,
      },
    });
  }
  const chunkKb = spec.chunk_size_kb || limits.defaultChunkSizeKb;
  if (!Number.isInteger(chunkKb) || chunkKb < 1 || chunkKb > limits.maxChunkSizeKb) {
    throw gatewayError('PARAMETER_OUT_OF_RANGE', {
      param: `${specParam}.chunk_size_kb`,
      args: { param: `${specParam}.chunk_size_kb`, reason: `must be between 1 and ${limits.maxChunkSizeKb}, got ${chunkKb}` },
    });
  }
  return {
    text,
    ...(tts.voice ? { voice: tts.voice } : {}),
    output_audio_spec: { audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: rate, chunk_size_kb: chunkKb },
  };
}

/**
 * Opens synthesis at `service`: one partialPredict message (`start` and `finish`) whose data is the
 * TtsRequestProto. The service answers partialPredict frames of raw PCM.
 */
export function openSynthesis(
  gate: Gate,
  service: ServiceEntry,
  request: SynthesisRequest,
  options: OpenOptions,
  limits: SpeechLimits,
): SynthesisStream {
  const call = gate.open(
    service,
    {
      partialPredict: { data: { dataType: SpeechDataTypes.ttsRequest, protobuf: encodeTtsRequest(request) }, start: true, finish: true },
    },
    options,
  );
  return new SynthesisStream(call, service.name, request.output_audio_spec.chunk_size_kb * 1024, limits.maxBufferedBytes);
}

/**
 * The audio of one synthesis, re-cut into chunks of exactly `chunkBytes` (the last may be shorter),
 * `first` on the first and `last` on the last. The service's frames are read as they come into a
 * bounded queue, so a slow reader never holds more than the bound (see BoundedQueue).
 */
export class SynthesisStream implements AsyncIterable<AudioChunkOut> {
  readonly #call: ServiceCall;
  readonly #queue: BoundedQueue<Buffer>;
  readonly #chunkBytes: number;
  readonly #serviceName: string;

  constructor(call: ServiceCall, serviceName: string, chunkBytes: number, limitBytes: number) {
    this.#call = call;
    this.#serviceName = serviceName;
    this.#chunkBytes = chunkBytes;
    this.#queue = new BoundedQueue(limitBytes);
    void this.#pump();
  }

  /** Aborts when the stream fails (overflow, service error), so a writer waiting for 'drain' stops. */
  get failedSignal(): AbortSignal {
    return this.#queue.failedSignal;
  }

  /** Stops the synthesis at the service; the reader gets `error`. */
  cancel(error = gatewayError('REQUEST_CANCELED')): void {
    this.#call.cancel(error);
    this.#queue.fail(error, true);
  }

  async #pump(): Promise<void> {
    await pumpInto(
      this.#call,
      this.#queue,
      (answer) => {
        const audio = audioOf(answer, this.#serviceName);
        return audio && audio.length > 0 ? { item: audio, size: audio.length } : undefined;
      },
      (error) => this.cancel(error),
    );
  }

  async *[Symbol.asyncIterator](): AsyncIterator<AudioChunkOut> {
    const size = this.#chunkBytes;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    // One full chunk is held back until it is known whether more audio follows, to mark `last`.
    let held: Buffer | undefined;
    let first = true;
    let completed = false;
    const emit = (data: Buffer, last: boolean): AudioChunkOut => {
      const chunk = { data, first, last };
      first = false;
      return chunk;
    };
    try {
      for await (const audio of this.#queue) {
        pending.push(audio);
        pendingBytes += audio.length;
        while (pendingBytes >= size) {
          const joined = Buffer.concat(pending, pendingBytes);
          if (held) yield emit(held, false);
          held = joined.subarray(0, size);
          pending = [joined.subarray(size)];
          pendingBytes -= size;
        }
      }
      const rest = pendingBytes > 0 ? Buffer.concat(pending, pendingBytes) : undefined;
      if (held && rest) {
        yield emit(held, false);
        yield emit(rest, true);
      } else if (held || rest) {
        yield emit((held ?? rest)!, true);
      } else {
        // A service that produced no audio still ends the stream with one (empty) last chunk.
        yield emit(Buffer.alloc(0), true);
      }
      completed = true;
    } finally {
      if (!completed) this.cancel();
    }
  }
}

/**
 * The audio in one answer frame: protobuf bytes (raw PCM), or a JSON `{audio_base64}` (the SDKs'
 * TtsResponse data type). Frames without data carry only flags.
 */
function audioOf(answer: ServiceAnswer, serviceName: string): Buffer | undefined {
  const payload =
    answer.body === 'partialPredict' ? answer.partialPredict?.data : answer.body === 'predict' ? answer.predict?.data : undefined;
  if (!payload) return undefined;
  const bad = (reason: string) => gatewayError('SERVICE_BAD_RESPONSE', { args: { service: serviceName, reason } });
  if (payload.protobuf !== undefined) {
    if (payload.dataType && payload.dataType !== SpeechDataTypes.audio)
      throw bad(`synthesis audio has dataType '${payload.dataType}', expected '${SpeechDataTypes.audio}'`);
    return Buffer.from(payload.protobuf);
  }
  if (payload.json !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(payload.json);
    } catch {
      throw bad('a synthesis frame holds JSON that does not parse');
    }
    const base64 = (value as { audio_base64?: unknown } | null)?.audio_base64;
    if (typeof base64 !== 'string') throw bad('a JSON synthesis frame has no audio_base64');
    return Buffer.from(base64, 'base64');
  }
  return undefined;
}
