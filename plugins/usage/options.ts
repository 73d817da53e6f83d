export interface UsageOptions {
  /** Days of usage kept; older days are removed. */
  retentionDays: number;
  /** How often counted requests and tokens are written to the store. */
  flushIntervalMs: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    retentionDays: { type: 'integer', minimum: 1, maximum: 3660, default: 400 },
    flushIntervalMs: { type: 'integer', minimum: 100, maximum: 600000, default: 5000 },
  },
} as const;
