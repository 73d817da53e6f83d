/**
 * Load reports: what an instance says about its own load, in the headers of the `heartBeat` messages
 * it sends (docs/routing.md, "Load reports"). Any language can send them: every header is optional,
 * names are matched case-insensitively, and a heartBeat without them leaves the last report in place.
 *
 * | header | value |
 * |---|---|
 * | `x-load-in-flight` | requests the engine is working on (integer) |
 * | `x-load-queue-depth` | requests waiting in the engine's own queue (integer) |
 * | `x-load-kv-cache` | KV-cache use, 0 to 1 |
 * | `x-load-models` | models and adapters loaded and ready, comma-separated, by the names requests use |
 */
import type { StringMap } from './messages.js';

export const LOAD_HEADERS = {
  inFlight: 'x-load-in-flight',
  queueDepth: 'x-load-queue-depth',
  kvCacheUsage: 'x-load-kv-cache',
  models: 'x-load-models',
} as const;

export interface LoadReport {
  readonly inFlight?: number;
  readonly queueDepth?: number;
  readonly kvCacheUsage?: number;
  readonly models?: readonly string[];
}

/** The heartBeat headers of a report (empty for none). */
export function encodeLoadReport(report: LoadReport | undefined): StringMap {
  const headers: StringMap = {};
  if (!report) return headers;
  if (report.inFlight !== undefined) headers[LOAD_HEADERS.inFlight] = String(Math.max(0, Math.round(report.inFlight)));
  if (report.queueDepth !== undefined) headers[LOAD_HEADERS.queueDepth] = String(Math.max(0, Math.round(report.queueDepth)));
  if (report.kvCacheUsage !== undefined) headers[LOAD_HEADERS.kvCacheUsage] = String(Math.min(1, Math.max(0, report.kvCacheUsage)));
  if (report.models !== undefined) headers[LOAD_HEADERS.models] = report.models.join(',');
  return headers;
}

/** The report in a heartBeat's headers; undefined when it carries none. Bad values are ignored. */
export function parseLoadReport(headers: StringMap | undefined): LoadReport | undefined {
  if (!headers) return undefined;
  let report: { inFlight?: number; queueDepth?: number; kvCacheUsage?: number; models?: string[] } | undefined;
  for (const name in headers) {
    const value = headers[name]!;
    switch (name.toLowerCase()) {
      case LOAD_HEADERS.inFlight:
        if (/^\d{1,9}$/.test(value)) (report ??= {}).inFlight = Number(value);
        break;
      case LOAD_HEADERS.queueDepth:
        if (/^\d{1,9}$/.test(value)) (report ??= {}).queueDepth = Number(value);
        break;
      case LOAD_HEADERS.kvCacheUsage: {
        const usage = Number(value);
        if (value !== '' && usage >= 0 && usage <= 1) (report ??= {}).kvCacheUsage = usage;
        break;
      }
      case LOAD_HEADERS.models:
        (report ??= {}).models = value
          .split(',')
          .map((m) => m.trim())
          .filter((m) => m !== '')
          .slice(0, 256);
        break;
    }
  }
  return report;
}
