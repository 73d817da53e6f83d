/**
 * Bounding what goes into a log line. A value that came from outside (a service's billing record, a
 * caller's field) can be megabytes; logged whole, 5 billing records of 20 MiB wrote 100 MiB of log.
 * Long strings are cut to `maxChars` with a note of their length, long arrays to `maxItems`, and
 * nesting below `maxDepth` is summarised.
 */
export interface LogBounds {
  maxChars: number;
  maxItems: number;
  maxDepth: number;
}

export const LOG_BOUNDS: LogBounds = { maxChars: 1024, maxItems: 20, maxDepth: 4 };

/** A string cut to `maxChars`, saying how long it was. */
export function truncateText(text: string, maxChars = LOG_BOUNDS.maxChars): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}…[${text.length} chars]`;
}

/** A copy of `value` fit for a log line (see LogBounds); small values come back as they are. */
export function boundForLog(value: unknown, bounds: LogBounds = LOG_BOUNDS, depth = 0): unknown {
  if (typeof value === 'string') return truncateText(value, bounds.maxChars);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `[${value.byteLength} bytes]`;
  if (depth >= bounds.maxDepth) return Array.isArray(value) ? `[array of ${value.length}]` : '[object]';
  if (Array.isArray(value)) {
    const items = value.slice(0, bounds.maxItems).map((v) => boundForLog(v, bounds, depth + 1));
    if (value.length > bounds.maxItems) items.push(`…[${value.length} items]`);
    return items;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const key of Object.keys(value)) {
    if (n++ >= bounds.maxItems) {
      out['…'] = `[${Object.keys(value).length} keys]`;
      break;
    }
    out[key] = boundForLog((value as Record<string, unknown>)[key], bounds, depth + 1);
  }
  return out;
}
