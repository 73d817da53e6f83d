/**
 * Speech for model services: how the gateway's processSynthesis and processRecognition reach a
 * service built with this SDK, and helpers to read and answer them. Both arrive at the
 * `partialPredict` handler (see docs/speech.md for the data types):
 *
 * - synthesis: one message whose data is a TtsRequestProto (`readTtsRequest`); answer by yielding
 *   raw PCM at the requested rate (`audioPayload`), in pieces of any size, as it is produced;
 * - recognition: the first message's config is a RecognitionConfig (`readRecognitionConfig`), every
 *   message's data is raw PCM (possibly empty); answer by yielding `asrResponsePayload(...)`.
 */
import type { AsrResponseProto, PayloadProto, RecognitionConfig, TtsRequestProto } from '@model-gateway/protocol';
import { audioPayload, decodeRecognitionConfig, decodeTtsRequest, encodeAsrResponse, SpeechDataTypes } from '@model-gateway/protocol';
import { PayloadError, type Payload } from './payload.js';

export { SpeechDataTypes, audioPayload };
export {
  decodeAsrResponse,
  encodeAsrResponse,
  encodeRecognitionConfig,
  encodeTtsRequest,
  decodeTtsRequest,
  decodeRecognitionConfig,
} from '@model-gateway/protocol';

/** The TtsRequestProto of a synthesis message (protobuf, or JSON with the proto's field names). */
export function readTtsRequest(payload: Payload): TtsRequestProto {
  return readMessage(payload, 'TtsRequestProto', decodeTtsRequest);
}

/** The RecognitionConfig of the first recognition message; undefined when the message has none. */
export function readRecognitionConfig(payload: Payload | undefined): RecognitionConfig | undefined {
  if (!payload || payload.kind === 'empty') return undefined;
  return readMessage(payload, 'RecognitionConfig', decodeRecognitionConfig);
}

function readMessage<T>(payload: Payload, name: string, decode: (bytes: Uint8Array) => T): T {
  if (payload.kind === 'protobuf') {
    try {
      return decode(payload.bytes!);
    } catch (err) {
      throw new PayloadError(`The payload is not a ${name}: ${(err as Error).message}`);
    }
  }
  if (payload.kind === 'json') return payload.json<T>();
  throw new PayloadError(`The payload is empty; expected a ${name}`);
}

/** A recognition result as the data of an answer frame. */
export function asrResponsePayload(response: AsrResponseProto): PayloadProto {
  return { dataType: SpeechDataTypes.asrResponse, protobuf: encodeAsrResponse(response) };
}

/**
 * A streaming linear-interpolation resampler for 16-bit little-endian mono PCM. Feed it pieces of
 * any length (odd bytes are carried over); it keeps one sample of history, so the output is the same
 * as resampling the whole signal at once.
 */
export class LinearResampler {
  readonly #fromRate: number;
  readonly #toRate: number;
  #carry: Buffer | undefined;
  /** The last input sample of the previous piece (the signal's history). */
  #previous: number | undefined;
  /** Input samples before the current piece, and output samples produced so far. */
  #consumed = 0;
  #produced = 0;

  constructor(fromRate: number, toRate: number) {
    if (!(Number.isInteger(fromRate) && Number.isInteger(toRate) && fromRate > 0 && toRate > 0)) {
      throw new RangeError(`rates must be positive integers, got ${fromRate} → ${toRate}`);
    }
    this.#fromRate = fromRate;
    this.#toRate = toRate;
  }

  push(piece: Uint8Array): Buffer {
    let bytes = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    if (this.#carry) {
      bytes = Buffer.concat([this.#carry, bytes]);
      this.#carry = undefined;
    }
    if (bytes.length % 2 === 1) {
      this.#carry = Buffer.from(bytes.subarray(bytes.length - 1));
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    if (this.#fromRate === this.#toRate) return Buffer.from(bytes);
    const count = bytes.length / 2;
    if (count === 0) return Buffer.alloc(0);
    // x[0] is the previous piece's last sample when there is one; x[i] is input sample `base + i`.
    const offset = this.#previous === undefined ? 0 : 1;
    const base = this.#consumed - offset;
    const length = count + offset;
    const sample = (i: number): number => (i < offset ? this.#previous! : bytes.readInt16LE((i - offset) * 2));
    const out: number[] = [];
    for (;;) {
      // Output sample k sits at input position k·from/to, computed exactly from integers.
      const numerator = this.#produced * this.#fromRate;
      const whole = Math.floor(numerator / this.#toRate);
      const i = whole - base;
      if (i + 1 >= length) break;
      const frac = (numerator - whole * this.#toRate) / this.#toRate;
      out.push(Math.round(sample(i) * (1 - frac) + sample(i + 1) * frac));
      this.#produced++;
    }
    this.#previous = sample(length - 1);
    this.#consumed += count;
    const result = Buffer.alloc(out.length * 2);
    for (let k = 0; k < out.length; k++) result.writeInt16LE(Math.max(-32768, Math.min(32767, out[k]!)), k * 2);
    return result;
  }
}
