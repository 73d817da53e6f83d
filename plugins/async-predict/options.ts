/** The plugin's settings (`plugins.options.async-predict`), validated with their defaults at boot. */
export interface AsyncPredictOptions {
  /** Tasks this process dispatches at once (over all accounts; each account also has its running cap). */
  concurrency: number;
  /** A claim lasts this long without renewal; workers renew every third of it. */
  leaseMs: number;
  /** How often the store is polled for work created by other processes or left by a crashed one. */
  pollMs: number;
  /** How often tasks past the retention (`store.resultRetentionDays`) are removed. */
  reaperIntervalMs: number;
  /** A task claimed this many times without finishing (its gateway died each time) ends in an error. */
  maxAttempts: number;
  /** Further dispatches of a claimed task after its service instance disconnected or none was left. */
  retries: number;
  /** How long a claimed task waits for an instance of its service before a retry (else it fails). */
  instanceWaitMs: number;
  /** Deadline of one dispatch to the service (504 PREDICT_TIMEOUT after it); 0 means none. */
  taskTimeoutMs: number;
  /** Accept tasks for a service with no instance connected to this gateway (they wait QUEUED). */
  acceptWithoutInstances: boolean;
  /** For a service declared `batch: true`: up to this many waiting tasks go as one `batch` request (1: never). */
  batchSize: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    concurrency: { type: 'integer', minimum: 1, default: 64 },
    leaseMs: { type: 'integer', minimum: 100, default: 30_000 },
    pollMs: { type: 'integer', minimum: 10, default: 1_000 },
    reaperIntervalMs: { type: 'integer', minimum: 10, default: 3_600_000 },
    maxAttempts: { type: 'integer', minimum: 1, default: 5 },
    retries: { type: 'integer', minimum: 0, default: 2 },
    instanceWaitMs: { type: 'integer', minimum: 0, default: 30_000 },
    taskTimeoutMs: { type: 'integer', minimum: 0, default: 6 * 3_600_000 },
    acceptWithoutInstances: { type: 'boolean', default: false },
    batchSize: { type: 'integer', minimum: 1, maximum: 1000, default: 16 },
  },
} as const;
