import type Koa from 'koa';
import { gatewayError } from '../errors.js';

/** Paths that keep answering while the gateway drains: the probes and the metrics. */
const ALWAYS_SERVED = /^\/(health|metrics)(\/|$)/;

/**
 * Counts the HTTP requests in flight and, once draining started (SIGTERM), refuses new ones with
 * 503 GATE_IS_SHUT_DOWN and `Connection: close`, so callers retry on another gateway while the
 * ones already running finish.
 */
export class HttpDrain {
  #inFlight = 0;
  #draining = false;
  #idle: (() => void) | undefined;

  get draining(): boolean {
    return this.#draining;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  readonly middleware: Koa.Middleware = async (ctx, next) => {
    if (this.#draining && !ALWAYS_SERVED.test(ctx.path)) {
      ctx.set('Connection', 'close');
      throw gatewayError('GATE_IS_SHUT_DOWN');
    }
    this.#inFlight++;
    try {
      await next();
    } finally {
      if (--this.#inFlight === 0) this.#idle?.();
    }
  };

  /** Stops taking requests; resolves when those in flight finished, or at `deadline` (epoch ms). */
  async drain(deadline: number): Promise<void> {
    this.#draining = true;
    if (this.#inFlight === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#idle = resolve;
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    });
    clearTimeout(timer);
    this.#idle = undefined;
  }
}
