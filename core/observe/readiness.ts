/** One condition of readiness and whether it holds now. */
export interface ReadinessCheck {
  name: string;
  ok: boolean;
  reason?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: ReadinessCheck[];
}

export interface ReadinessSources {
  /** Plugins started and both listeners up. */
  started(): boolean;
  /** The gateway is draining (SIGTERM): not ready for new traffic. */
  draining(): boolean;
  /** Resolves when the store answers. */
  pingStore(): Promise<void>;
}

/** How long a store ping may take before the store counts as unreachable. */
const STORE_PING_TIMEOUT_MS = 2000;

/**
 * Whether this gateway should get traffic: plugins started, listeners up, the store reachable, and
 * not draining. A load balancer probes it (`/health/ready`); liveness is only "the process answers".
 */
export class Readiness {
  readonly #sources: ReadinessSources;

  constructor(sources: ReadinessSources) {
    this.#sources = sources;
  }

  async check(): Promise<ReadinessReport> {
    const checks: ReadinessCheck[] = [];
    const started = this.#sources.started();
    checks.push(started ? { name: 'started', ok: true } : { name: 'started', ok: false, reason: 'plugins or listeners are not started' });
    const draining = this.#sources.draining();
    checks.push(draining ? { name: 'draining', ok: false, reason: 'the gateway is shutting down' } : { name: 'draining', ok: true });
    checks.push(await this.#storeCheck());
    return { ready: checks.every((c) => c.ok), checks };
  }

  async #storeCheck(): Promise<ReadinessCheck> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${STORE_PING_TIMEOUT_MS} ms`)), STORE_PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.#sources.pingStore(), timeout]);
      return { name: 'store', ok: true };
    } catch (err) {
      return { name: 'store', ok: false, reason: `the store is unreachable: ${(err as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
  }
}
