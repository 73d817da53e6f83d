/** Token counts as OpenAI (`prompt_tokens`…) or Anthropic (`input_tokens`…) report them. */
export type Usage = Record<string, unknown>;

const KEY = '"usage":';

/**
 * The `usage` object of one answer or stream event, found without parsing the whole JSON text: the
 * service's answers pass through unparsed, and only the usage object is read for the usage record.
 * Undefined when there is none (or `"usage":null`).
 */
export function findUsage(json: string): Usage | undefined {
  const at = json.lastIndexOf(KEY);
  if (at < 0) return undefined;
  let start = at + KEY.length;
  while (json.charCodeAt(start) === 32) start++;
  if (json.charCodeAt(start) !== 123 /* { */) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 /* } */ && --depth === 0) {
      try {
        const usage = JSON.parse(json.slice(start, i + 1)) as unknown;
        return usage && typeof usage === 'object' ? (usage as Usage) : undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Merges the usage of a later event over an earlier one (Anthropic splits it over two events). */
export function mergeUsage(into: Usage | undefined, next: Usage | undefined): Usage | undefined {
  if (!next) return into;
  return into ? Object.assign(into, next) : { ...next };
}
