import type { GatewayError } from '../errors.js';
import { extParamsOverLimits } from './client-message.js';
import { EXT_FIELD, EXT_PARAMS_FIELD } from '../../proto/src/index.js';

/**
 * The `ext.params` bounds of a client message counted as its bytes arrive (the call's HTTP/2 chunks,
 * the 5-byte gRPC prefix first), for large messages of an admitted key: the preflight counts them too
 * (client-message.ts), but only once grpc-js has received and gathered the whole message. The hostile
 * bench's 3.8 MB ext call with 300,000 params, read at its account's input rate, cost the gateway
 * 60-160 ms of CPU per call that way (its chunks held for half a second each, then gathered, then
 * collected as old garbage); counted here it is refused within its first kilobytes.
 *
 * Reads field headers only and skips every value by its length, as the preflight does. Anything it
 * does not expect (another wire type, a length past its field) ends the scan: the preflight names
 * what is wrong once the message is whole.
 */
export class ExtParamsScan {
  readonly #limits: { maxExtParams: number; maxExtParamBytes: number };
  /** Bytes of the gRPC prefix still to read, and the message's length once they are. */
  #prefix: number[] = [];
  #messageLeft = 0;
  /** Bytes of the current field's value still to skip. */
  #skip = 0;
  /** The field header being read: its tag, then its length (or varint value), byte by byte. */
  #stage: 'tag' | 'length' | 'varint' = 'tag';
  #varint = 0;
  #scale = 1;
  #tag = 0;
  #headerBytes = 0;
  /** Bytes of the ext field still to read; -1 outside it. */
  #extLeft = -1;
  #count = 0;
  #bytes = 0;
  #done = false;
  #refused: GatewayError | undefined;

  constructor(limits: { maxExtParams: number; maxExtParamBytes: number }) {
    this.#limits = limits;
  }

  /** The refusal, once the params were found over a bound. */
  get refused(): GatewayError | undefined {
    return this.#refused;
  }

  /** Counts a chunk; the refusal once the params are over a bound. Nothing more is read after the first message or a refusal. */
  push(chunk: Buffer): GatewayError | undefined {
    let at = 0;
    while (at < chunk.length && !this.#done) {
      if (this.#prefix.length < 5) {
        this.#prefix.push(chunk[at++]!);
        if (this.#prefix.length === 5) this.#messageLeft = Buffer.from(this.#prefix).readUInt32BE(1);
        if (this.#prefix.length === 5 && this.#messageLeft === 0) this.#done = true;
        continue;
      }
      if (this.#skip > 0) {
        const step = Math.min(this.#skip, chunk.length - at);
        this.#skip -= step;
        at += step;
        this.#consume(step);
        continue;
      }
      const byte = chunk[at++]!;
      this.#headerBytes++;
      this.#consume(1);
      this.#varint += (byte & 0x7f) * this.#scale;
      this.#scale *= 128;
      if (byte >= 0x80) {
        if (this.#scale > 2 ** 56) this.#done = true; // not a varint any encoder writes
        continue;
      }
      const value = this.#varint;
      this.#varint = 0;
      this.#scale = 1;
      const refused = this.#headerRead(value);
      if (refused) {
        this.#done = true;
        this.#refused = refused;
        return refused;
      }
    }
    return undefined;
  }

  /** A varint of a field header is complete. */
  #headerRead(value: number): GatewayError | undefined {
    if (this.#stage === 'tag') {
      this.#tag = value;
      const wireType = value % 8;
      if (wireType === 2) this.#stage = 'length';
      else if (wireType === 0) this.#stage = 'varint';
      else if (wireType === 1 || wireType === 5) this.#fieldDone(wireType === 1 ? 8 : 4);
      else this.#done = true;
      return undefined;
    }
    if (this.#stage === 'varint') {
      this.#fieldDone(0);
      return undefined;
    }
    const field = Math.floor(this.#tag / 8);
    const headerBytes = this.#headerBytes;
    if (this.#extLeft < 0 && field === EXT_FIELD) {
      // The ext field: its entries are read next, their headers counted, their values skipped.
      this.#extLeft = value;
      this.#count = 0;
      this.#bytes = 0;
      this.#fieldDone(0);
      return undefined;
    }
    if (this.#extLeft >= 0 && value > this.#extLeft) {
      this.#done = true; // a length past its ext field: malformed, for the preflight to name
      return undefined;
    }
    this.#fieldDone(value);
    if (this.#extLeft < 0 || field !== EXT_PARAMS_FIELD) return undefined;
    this.#count++;
    this.#bytes += headerBytes + value;
    return extParamsOverLimits(this.#limits, this.#count, this.#bytes);
  }

  /** A field header is read: its value (`skip` bytes) comes next, then the next header. */
  #fieldDone(skip: number): void {
    this.#skip = skip;
    this.#stage = 'tag';
    this.#headerBytes = 0;
  }

  /** `n` bytes of the message read: the ext field and the message end where their lengths say. */
  #consume(n: number): void {
    this.#messageLeft -= n;
    if (this.#extLeft >= 0) {
      this.#extLeft -= n;
      // The ext field is read: one ext per message is what a client sends (the preflight handles more).
      if (this.#extLeft <= 0 && this.#skip === 0 && this.#stage === 'tag' && this.#headerBytes === 0) this.#done = true;
    }
    if (this.#messageLeft <= 0) this.#done = true;
  }
}
