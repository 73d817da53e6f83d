/**
 * One gateway's fitting machinery: the store (on the gateway's storage: embedded, MongoDB or memory), the
 * job runner, the derived services in the Directory, and the periodic sweep that fails orphaned jobs,
 * repairs half-applied results and (with MongoDB) picks up other gateways' changes.
 */
import { join } from 'node:path';
import { every, gatewayError, type PluginContext } from '../../core/plugins/index.js';
import { DerivedServices } from './derived-services.js';
import { JobRunner } from './job-runner.js';
import type { FittingOptions } from './options.js';
import { jobErrorOf, type FittingStore } from './store/fitting-store.js';
import { DocFittingStore } from './store/doc-fitting-store.js';

export interface Opened {
  store: FittingStore;
  runner: JobRunner;
}

export class FittingRuntime {
  readonly ctx: PluginContext<FittingOptions>;
  readonly derived: DerivedServices;
  /** Where fitted models are kept: `<modelRoot>/<derived service ID>/<job ID>`. */
  readonly modelRoot: string;
  #opened: Opened | undefined;
  readonly #stops: (() => void)[] = [];
  readonly #background = new Set<Promise<void>>();
  #closed = false;

  constructor(ctx: PluginContext<FittingOptions>) {
    this.ctx = ctx;
    this.derived = new DerivedServices(ctx);
    this.modelRoot = ctx.options.modelDir ?? join(ctx.config.store.dataDir, 'fitted');
  }

  /**
   * The store and runner, opened by `start`: plugins start before the gateway listens, so every
   * request finds them open. After `close`, 503 GATE_IS_SHUT_DOWN.
   */
  get opened(): Opened {
    if (this.#closed) throw gatewayError('GATE_IS_SHUT_DOWN');
    if (!this.#opened) throw new Error('fitting: the store is used before the plugin started');
    return this.#opened;
  }

  /** Boot: open the store, serve the stored derived services, settle what a stopped gateway left, start the timers. */
  async start(): Promise<void> {
    const store: FittingStore = await this.ctx.storage.open<FittingStore>({ docs: (docs) => DocFittingStore.open({ docs }) });
    if (this.#closed) {
      // Stopped while the store opened (a boot that failed elsewhere): nothing else will close it.
      await store.close();
      return;
    }
    this.#opened = { store, runner: new JobRunner(this.ctx, store, this.derived) };
    this.derived.reconcile(await store.listDerived());
    await this.sweep();
    const { leaseMs, syncIntervalMs } = this.ctx.options;
    this.#every(Math.max(100, Math.floor(leaseMs / 2)), () => this.sweep());
    // Other processes on the store (workers, other gateways) create and fit services too.
    if (this.ctx.storage.kind !== 'memory' && syncIntervalMs > 0) {
      this.#every(syncIntervalMs, async () => this.derived.reconcile(await store.listDerived()));
    }
  }

  /** Fails jobs whose gateway stopped renewing them, and applies results a crash left unapplied. */
  async sweep(): Promise<void> {
    const { store } = this.opened;
    const expired = await store.expireJobs(Date.now(), jobErrorOf(gatewayError('FITTING_INTERRUPTED')));
    for (const job of expired)
      this.ctx.logger.warn({ jobId: job.jobId, serviceId: job.serviceId }, 'fitting job failed: its gateway stopped renewing it');
    for (const service of await store.applyPendingResults()) this.derived.register(service);
  }

  /** Runs after the Gate drained: waits for the jobs' final writes, then closes the store. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const stop of this.#stops.splice(0)) stop();
    await Promise.all(this.#background);
    const opened = this.#opened;
    if (!opened) return;
    await opened.runner.close();
    await opened.store.close();
  }

  /** Background work every `ms` (one run at a time); close() waits for a run in progress. */
  #every(ms: number, work: () => Promise<void>): void {
    const tracked = (): Promise<void> | undefined => {
      if (this.#closed) return undefined;
      const run = work();
      // Tracked settled either way: close() waits for the run, never for its error (onError has it).
      const settled: Promise<void> = run.then(ignore, ignore).finally(() => this.#background.delete(settled));
      this.#background.add(settled);
      return run;
    };
    this.#stops.push(every(ms, tracked, { onError: (err) => this.ctx.logger.warn({ err }, 'fitting background work failed; will retry') }));
  }
}

function ignore(): void {}
