import type { PayloadProto } from '../../proto/src/index.js';

/**
 * A JSON payload built in process may carry its value already parsed, beside its `json` text: an
 * in-process instance (the upstream connector) reads the value instead of parsing the text again,
 * which for a long conversation is most of what the gateway spends on a request. The value rides
 * under a symbol, so the wire never carries it (the gRPC encoder and JSON.stringify skip symbols)
 * and a dialled-in service reads the text as always. Whoever sets it vouches that the text is the
 * value's JSON, parsed by the gateway's rules (core/validation/json.ts).
 */
const PARSED = Symbol('parsed JSON value');

type WithParsed = PayloadProto & { [PARSED]?: unknown };

/** A JSON payload whose value the caller already holds. */
export function parsedPayload(json: string, value: unknown, dataType?: string): PayloadProto {
  return withParsedValue(dataType === undefined ? { json } : { json, dataType }, value);
}

/** Sets the parsed value of a payload object the caller just made (its own copy), and returns it. */
export function withParsedValue(payload: PayloadProto, value: unknown): PayloadProto {
  (payload as WithParsed)[PARSED] = value;
  return payload;
}

/** The parsed value of a payload made by parsedPayload; undefined for any other. */
export function parsedValueOf(payload: PayloadProto | undefined): unknown {
  return (payload as WithParsed | undefined)?.[PARSED];
}
