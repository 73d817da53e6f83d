/**
 * Wake on request: a request for a service with no connected instance waits for one (the service's
 * `waitForInstanceMs`) instead of failing at once, and the service's waker (a command or an HTTP call)
 * is invoked once to start an instance, so engines that sleep when idle wake up on the first request.
 * The waiting is bounded per account (`limits.instanceWaitersPerAccount`): waiting requests hold a
 * connection and a little memory each, so one account cannot pile them up.
 */
import { spawn } from 'node:child_process';
import type { WakerConfig } from '../config/types.js';
import type { ServiceEntry } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import type { Logger } from '../observe/logger.js';

/** How long a waker's HTTP call may take; the wait for the instance goes on regardless. */
const WAKER_HTTP_TIMEOUT_MS = 10_000;

export interface WakeOnRequestOptions {
  /** Resolves true once a request for the service could be sent (Gate.whenInstance). */
  whenInstance(serviceId: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  waitersPerAccount: number;
  log: Logger;
}

export class WakeOnRequest {
  readonly #options: WakeOnRequestOptions;
  readonly #log: Logger;
  /** Requests waiting now, per caller account. */
  readonly #waiting = new Map<number, number>();
  /** When each service's waker last ran (ms since the epoch). */
  readonly #lastWake = new Map<number, number>();

  constructor(options: WakeOnRequestOptions) {
    this.#options = options;
    this.#log = options.log.child({ component: 'wake-on-request' });
  }

  /**
   * Waits for an instance of `service` (whose `target` serves it: itself, or a derived service's
   * base), waking it once. Throws NO_INSTANCE_IN_TIME after `waitForInstanceMs`, and
   * TOO_MANY_WAITING_REQUESTS when the account has too many requests waiting already.
   */
  async wait(service: ServiceEntry, target: ServiceEntry, accountId: number, accountName: string, signal?: AbortSignal): Promise<void> {
    const waitMs = service.waitForInstanceMs ?? target.waitForInstanceMs ?? 0;
    const waiting = this.#waiting.get(accountId) ?? 0;
    if (waiting >= this.#options.waitersPerAccount) {
      throw gatewayError('TOO_MANY_WAITING_REQUESTS', { args: { account: accountName, limit: this.#options.waitersPerAccount } });
    }
    this.#waiting.set(accountId, waiting + 1);
    const woken = this.#wake(target);
    const started = Date.now();
    try {
      this.#log.info({ service: target.name, waitMs, woken }, 'no instance: the request waits for one');
      if (await this.#options.whenInstance(target.id, waitMs, signal)) {
        this.#log.info({ service: target.name, waitedMs: Date.now() - started }, 'an instance connected: the request goes on');
        return;
      }
      if (signal?.aborted) throw gatewayError('REQUEST_CANCELED');
      // The request's own failure (NO_INSTANCE_IN_TIME) is the one warn line of it.
      this.#log.info({ service: target.name, waitMs }, 'no instance connected in time');
      throw gatewayError('NO_INSTANCE_IN_TIME', { args: { service: service.name, waitMs, woken } });
    } finally {
      const left = (this.#waiting.get(accountId) ?? 1) - 1;
      if (left > 0) this.#waiting.set(accountId, left);
      else this.#waiting.delete(accountId);
      // After the slot is free: the line says the account may wait again.
      if (signal?.aborted) this.#log.info({ service: target.name, waitedMs: Date.now() - started }, 'the caller left: its wait ends');
    }
  }

  /** Runs the service's waker unless it ran within its cooldown; true when it has one. */
  #wake(service: ServiceEntry): boolean {
    const waker = service.waker;
    if (!waker) return false;
    const now = Date.now();
    const last = this.#lastWake.get(service.id);
    if (last !== undefined && now - last < waker.cooldownMs) return true;
    this.#lastWake.set(service.id, now);
    if (waker.command) this.#runCommand(service, waker.command);
    else if (waker.url) void this.#callUrl(service, waker);
    return true;
  }

  #runCommand(service: ServiceEntry, command: readonly string[]): void {
    const [file, ...args] = command as [string, ...string[]];
    // Detached and not waited for: the waker starts an instance that outlives the request (and may
    // outlive this gateway). No shell: the arguments are taken as written.
    const child = spawn(file, args, { detached: true, stdio: 'ignore' });
    child.on('error', (err) => this.#log.error({ err, service: service.name, command: file }, 'waker command failed to start'));
    child.unref();
    this.#log.info({ service: service.name, command: file, pid: child.pid }, 'waker command started');
  }

  async #callUrl(service: ServiceEntry, waker: WakerConfig): Promise<void> {
    try {
      const res = await fetch(waker.url!, { method: waker.method, signal: AbortSignal.timeout(WAKER_HTTP_TIMEOUT_MS) });
      await res.arrayBuffer();
      this.#log.info({ service: service.name, status: res.status }, 'waker called');
    } catch (err) {
      this.#log.error({ err, service: service.name }, 'waker call failed');
    }
  }
}
