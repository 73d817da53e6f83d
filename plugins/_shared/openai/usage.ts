import { skipValue } from './json-text.js';

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
  const end = skipValue(json, start);
  if (json.charCodeAt(end - 1) !== 125 /* } */) return undefined;
  try {
    const usage = JSON.parse(json.slice(start, end)) as unknown;
    return usage && typeof usage === 'object' ? (usage as Usage) : undefined;
  } catch {
    return undefined;
  }
}

/** Merges the usage of a later event over an earlier one (Anthropic splits it over two events). */
export function mergeUsage(into: Usage | undefined, next: Usage | undefined): Usage | undefined {
  if (!next) return into;
  return into ? Object.assign(into, next) : { ...next };
}

/** Input and output tokens of a usage object, OpenAI (`prompt_tokens`…) or Anthropic (`input_tokens`…) style. */
export function tokenCounts(usage: Usage): { inputTokens: number; outputTokens: number } {
  return {
    inputTokens: count(usage.prompt_tokens) ?? count(usage.input_tokens) ?? 0,
    outputTokens: count(usage.completion_tokens) ?? count(usage.output_tokens) ?? 0,
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
