/**
 * The predict request bodies of the spec (2.2 PredictRequestData, 2.3 Predict2RequestData) and the
 * raw variant's query, as every predict endpoint reads them (synchronous and asynchronous predict):
 * the checks compiled once, and the rule that decides how a raw body reaches the service.
 */
import querySchema from '../../schemas/predict/predict-query.schema.json' with { type: 'json' };
import v2Schema from '../../schemas/predict/predict-with-config-v2.schema.json' with { type: 'json' };
import withConfigSchema from '../../schemas/predict/predict-with-config.schema.json' with { type: 'json' };
import { compileRequestSchema } from './request.js';

export interface PredictRequestData {
  data: Record<string, unknown>;
  config?: Record<string, unknown> | null;
  dataType?: string;
}

export interface Predict2RequestData {
  data: string;
  config?: string | null;
  dataType?: string;
}

/** Query of the raw `predict` variants. */
export interface PredictQuery {
  configId?: string;
  dataType?: string;
}

/** Checks a PredictRequestData body (400 VALIDATION_FAILED naming the field). */
export const readPredictRequestData = compileRequestSchema<PredictRequestData>(withConfigSchema);
/** Checks a Predict2RequestData body. */
export const readPredict2RequestData = compileRequestSchema<Predict2RequestData>(v2Schema);
/** Checks the query of a raw predict (`configId`, `dataType`). */
export const readPredictQuery = compileRequestSchema<PredictQuery>(querySchema, 'query');

const BINARY_TYPES = new Set([
  'application/octet-stream',
  'application/x-protobuf',
  'application/protobuf',
  'application/vnd.google.protobuf',
]);

// fatal: bytes that are not UTF-8 are reported, not replaced; ignoreBOM: a byte order mark is kept
// as U+FEFF, so that a body starting with one is seen (JSON.parse refuses it) instead of dropped.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as text when they are UTF-8 (a leading byte order mark kept), else undefined. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The media type of a raw body's Content-Type when the body goes to the service as a protobuf
 * payload; undefined when it goes as JSON text.
 */
export function binaryMediaType(contentType: string | undefined): string | undefined {
  const media = contentType?.split(';')[0]?.trim().toLowerCase();
  return media !== undefined && BINARY_TYPES.has(media) ? media : undefined;
}
