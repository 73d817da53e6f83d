export interface MetricsOptions {
  /** Where the metrics are served. */
  path: string;
  /**
   * A scrape must send `Authorization: Bearer <token>` (use `${METRICS_TOKEN}` in the file). Required
   * unless `unauthenticated` is true: the metrics name accounts and private services.
   */
  bearerToken?: string;
  /** Serve the metrics to anyone who reaches the port, without a token: only behind a network that keeps callers out. */
  unauthenticated: boolean;
  /** Distinct services and accounts kept as label values; more are counted as `other`. */
  maxServices: number;
  maxAccounts: number;
  /** Node process metrics: event-loop lag, heap, RSS, CPU, handles (prom-client's default metrics). */
  processMetrics: boolean;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', pattern: '^/[A-Za-z0-9/_-]*$', default: '/metrics' },
    bearerToken: { type: 'string', minLength: 16 },
    maxServices: { type: 'integer', minimum: 1, maximum: 10000, default: 200 },
    maxAccounts: { type: 'integer', minimum: 1, maximum: 10000, default: 200 },
    processMetrics: { type: 'boolean', default: true },
    unauthenticated: { type: 'boolean', default: false },
  },
  // Never open by default (issue 25 N7): without a token, the operator must say so.
  if: { not: { properties: { unauthenticated: { const: true } }, required: ['unauthenticated'] } },
  then: { required: ['bearerToken'] },
} as const;
