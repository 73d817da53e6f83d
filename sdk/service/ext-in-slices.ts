import {
  EXT_FIELD,
  EXT_PARAMS_FIELD,
  LENGTH_DELIMITED,
  fieldHeader,
  fieldRecords,
  messageDecoder,
  type ExtendedRequestProto,
  type FieldRecord,
  type GateToServiceProto,
} from '@model-gateway/protocol';
import type { RequestContext } from './context.js';
import { addParamTexts } from './ext-params.js';

/** GateToServiceProto's `requestId` and `headers` (gate.proto). */
const REQUEST_ID_FIELD = 1;
const HEADERS_FIELD = 1000;

/** An ext whose params take fewer bytes than this is decoded whole: its cost is small. */
const SLICED_PARAMS_MIN_BYTES = 256 * 1024;
/** The most params bytes, and entries, one slice decodes before the event loop turns. */
const SLICE_BYTES = 128 * 1024;
const SLICE_ENTRIES = 256;

type Decode<T> = (bytes: Buffer) => T;

/** The params still in their bytes, of the messages the lane's deserializer let through so. */
const pending = new WeakMap<GateToServiceProto, ParamsInSlices>();

/**
 * The bulk lane's deserializer. A large ext call's params (the largest map a gateway lets through is
 * 1024 params in 4 MiB) decoded whole took the SDK's event loop 8-27 ms at once (protobufjs's string
 * reads, the object conversion and the scavenges of them), and every other request of the service,
 * another account's included, waited for it (docs/benchmarks.md, issue 25). This decodes the rest of
 * the message and keeps the params' entries as bytes; the dispatcher decodes them a slice at a time
 * (`extParamTexts`), letting the event loop turn between slices. Any other message, or one shaped
 * other than a gateway writes an ext (`requestId`, `headers`, one `ext`), is decoded whole.
 */
export function laneDeserializer(decode: Decode<GateToServiceProto>): Decode<GateToServiceProto> {
  // Made with the lane, not at its first large ext: gate.proto is parsed for it.
  const decodeExt: Decode<ExtendedRequestProto> = messageDecoder('ExtendedRequestProto');
  return (bytes) => (bytes.length >= SLICED_PARAMS_MIN_BYTES && decodeKeepingParams(bytes, decode, decodeExt)) || decode(bytes);
}

function decodeKeepingParams(
  bytes: Buffer,
  decode: Decode<GateToServiceProto>,
  decodeExt: Decode<ExtendedRequestProto>,
): GateToServiceProto | undefined {
  const fields = fieldRecords(bytes);
  if (!fields) return undefined;
  const ext: FieldRecord[] = [];
  const others: FieldRecord[] = [];
  for (const record of fields) (record.field === EXT_FIELD ? ext : others).push(record);
  if (ext.length !== 1 || ext[0]!.wireType !== LENGTH_DELIMITED) return undefined;
  if (others.some((record) => record.field !== REQUEST_ID_FIELD && record.field !== HEADERS_FIELD)) return undefined;
  const extFields = fieldRecords(bytes, ext[0]!.valueStart, ext[0]!.end);
  if (!extFields) return undefined;
  const entries: FieldRecord[] = [];
  const extOthers: FieldRecord[] = [];
  for (const record of extFields)
    (record.field === EXT_PARAMS_FIELD && record.wireType === LENGTH_DELIMITED ? entries : extOthers).push(record);
  if (byteLength(entries) < SLICED_PARAMS_MIN_BYTES) return undefined;
  // The message without the params: its other fields, and an ext of its other fields.
  const shell = Buffer.concat([...pieces(bytes, others), fieldHeader(EXT_FIELD, byteLength(extOthers)), ...pieces(bytes, extOthers)]);
  const message = decode(shell);
  pending.set(message, new ParamsInSlices(bytes, entries, decodeExt));
  return message;
}

const byteLength = (records: readonly FieldRecord[]) => records.reduce((total, record) => total + record.end - record.start, 0);

function pieces(bytes: Buffer, records: readonly FieldRecord[]): Buffer[] {
  return records.map((record) => bytes.subarray(record.start, record.end));
}

/**
 * The ext's params as the handler gets them (ext-params.ts): decoded whole as any message, or a slice
 * at a time when the lane kept them in their bytes, stopping at the request's cancel.
 */
export async function extParamTexts(message: GateToServiceProto, request: Cancellable): Promise<Record<string, string>> {
  const sliced = pending.get(message);
  const texts: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!sliced) return addParamTexts(texts, message.ext?.params);
  pending.delete(message);
  return sliced.decodeInto(texts, request);
}

/** The request the params are for: the decoding stops once it is cancelled. */
type Cancellable = Pick<RequestContext, 'cancelled' | 'signal'>;

/** A large ext's params entries, still in the message's bytes. */
class ParamsInSlices {
  constructor(
    private readonly bytes: Buffer,
    private readonly entries: readonly FieldRecord[],
    private readonly decodeExt: Decode<ExtendedRequestProto>,
  ) {}

  /**
   * Each slice is a run of adjacent entries, read in place as an ExtendedRequestProto of only those
   * params, so the generated decoder reads every value, as it would the whole message.
   */
  async decodeInto(texts: Record<string, string>, request: Cancellable): Promise<Record<string, string>> {
    for (let first = 0; first < this.entries.length;) {
      let last = first + 1;
      while (
        last < this.entries.length &&
        last - first < SLICE_ENTRIES &&
        this.entries[last]!.end - this.entries[first]!.start <= SLICE_BYTES &&
        this.entries[last]!.start === this.entries[last - 1]!.end
      )
        last++;
      addParamTexts(texts, this.decodeExt(this.bytes.subarray(this.entries[first]!.start, this.entries[last - 1]!.end)).params);
      first = last;
      if (first < this.entries.length) {
        await new Promise((resolve) => setImmediate(resolve));
        if (request.cancelled) request.signal.throwIfAborted();
      }
    }
    return texts;
  }
}
