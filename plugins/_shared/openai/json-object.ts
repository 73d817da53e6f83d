/** JSON objects in answers the adapters complete or convert: a text that may or may not be one. */
export type JsonObject = Record<string, unknown>;

export const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text parsed, when it is JSON for an object; undefined for any other JSON and for non-JSON. */
export function parseJsonObject(text: string): JsonObject | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isJsonObject(value) ? value : undefined;
}
