/** Options of the fitting plugin (`plugins.options.fitting`), with defaults applied at boot. */
export interface FittingOptions {
  /**
   * A job belongs to the gateway that started it for this long without a renewal; the runner renews
   * it every third of it. A job whose gateway stopped fails (FITTING_INTERRUPTED) once it runs out.
   */
  leaseMs: number;
  /** Deadline of one fit at the service, in seconds; 0 means none. */
  fitTimeoutSec: number;
  /** Root of the fitted models' directories; default `<store.dataDir>/fitted`. */
  modelDir?: string;
  /**
   * With MongoDB: how often the gateway re-reads the derived services (created, fitted or deleted
   * through another gateway) into its Directory; 0 turns it off. Ignored with the memory store.
   */
  syncIntervalMs: number;
  /** IDs of derived services start here, above the IDs of configured services. */
  derivedIdStart: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    leaseMs: { type: 'integer', minimum: 100, default: 30_000 },
    fitTimeoutSec: { type: 'number', minimum: 0, default: 86_400 },
    modelDir: { type: 'string', minLength: 1 },
    syncIntervalMs: { type: 'integer', minimum: 0, default: 10_000 },
    derivedIdStart: { type: 'integer', minimum: 1, default: 100_000 },
  },
} as const;
