import type { OpenOptions, ServiceEntry } from '../../../core/plugins/index.js';
import { CORS_OPTIONS_SCHEMA, type CorsOptions } from '../http/cors.js';

/** Options both chat adapters take (`plugins.options.chatapi` / `plugins.options.chatapi-direct`). */
export interface ChatAdapterOptions {
  /** Deadline for a stream's first chunk; default: the service's predict timeout. */
  firstChunkTimeoutMs?: number;
  /** Deadline between two chunks of a stream. */
  idleTimeoutMs: number;
  /**
   * Also log each answer's whole usage object (cache and reasoning tokens too) on a line of its own
   * (info, `msg: "usage"`). Off by default: the access line has the model and the input and output
   * tokens of every answer, and a second line per request cost about 15 µs of CPU.
   */
  logUsage: boolean;
  /** CORS for browser apps; off unless `allowedOrigins` lists some. */
  cors?: CorsOptions;
}

export const CHAT_ADAPTER_OPTIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    firstChunkTimeoutMs: { type: 'integer', minimum: 0 },
    idleTimeoutMs: { type: 'integer', minimum: 0, default: 60_000 },
    logUsage: { type: 'boolean', default: false },
    cors: CORS_OPTIONS_SCHEMA,
  },
};

/**
 * The stream deadlines for one service, as Gate open options (the call enforces them): the first
 * chunk falls back to its predict timeout.
 */
export function streamDeadlines(
  options: ChatAdapterOptions,
  service: ServiceEntry,
  defaultTimeoutSec: number,
): Pick<OpenOptions, 'firstChunkTimeoutMs' | 'idleTimeoutMs'> {
  return {
    firstChunkTimeoutMs: options.firstChunkTimeoutMs ?? (service.timeoutSec ?? defaultTimeoutSec) * 1000,
    idleTimeoutMs: options.idleTimeoutMs,
  };
}
