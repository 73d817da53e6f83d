/**
 * Runs fitting jobs: sends `fit` to an instance of the base service, follows its `fitStatus`
 * progress into the job, and ends the job on the empty `fit` answer (SUCCESS: the derived service
 * switches to the new model) or on an error (FAILED, with the service's message kept).
 *
 * A job runs in the gateway process that accepted it, under a lease it renews. When the store says
 * the job is no longer this runner's (canceled through another gateway, or expired), the runner stops
 * and the service gets `cancel`. There is no automatic retry: a fit can be long and costly, and a
 * service that crashes on a dataset would crash again; the caller starts a new fit instead.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import {
  GateHeaders,
  gatewayError,
  GatewayError,
  LeaseKeeper,
  type PayloadProto,
  type PluginContext,
  type ServiceEntry,
  type StringMap,
} from '../../core/plugins/index.js';
import type { DerivedServices } from './derived-services.js';
import type { FittingOptions } from './options.js';
import { jobErrorOf, type DatasetRecord, type FittingStore, type JobRecord } from './store/fitting-store.js';

/** What a job needs beyond its record; decided when the fit request was accepted. */
export interface FitPlan {
  base: ServiceEntry;
  serviceName: string;
  dataset: DatasetRecord;
  headers: StringMap;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

export class JobRunner {
  /** Identifies this gateway process's claim on the jobs it runs. */
  readonly runnerId = randomUUID();
  readonly #ctx: PluginContext<FittingOptions>;
  readonly #store: FittingStore;
  readonly #derived: DerivedServices;
  readonly #running = new Map<number, Running>();
  /** The leases of the jobs running here (by job ID), renewed together from launch to end. */
  readonly #leases: LeaseKeeper<number>;

  constructor(ctx: PluginContext<FittingOptions>, store: FittingStore, derived: DerivedServices) {
    this.#ctx = ctx;
    this.#store = store;
    this.#derived = derived;
    const { leaseMs } = ctx.options;
    this.#leases = new LeaseKeeper<number>({
      intervalMs: Math.max(50, Math.floor(leaseMs / 3)),
      renew: (jobIds) => store.renewLeases(jobIds, this.runnerId, leaseMs),
      onError: (err) => ctx.logger.warn({ err }, 'fitting lease renewal failed; trying again'),
    });
  }

  get active(): number {
    return this.#running.size;
  }

  /** Starts a PENDING job created by this runner; returns at once. */
  launch(job: JobRecord, plan: FitPlan): void {
    const controller = new AbortController();
    this.#leases.hold(job.jobId, () => {
      if (!controller.signal.aborted) this.#ctx.logger.info({ jobId: job.jobId }, 'fitting job canceled or expired elsewhere; stopping it');
      controller.abort();
    });
    const done = this.#run(job, plan, controller)
      .catch((err: unknown) => this.#ctx.logger.error({ err, jobId: job.jobId }, 'fitting job runner failed'))
      .finally(() => {
        this.#leases.release(job.jobId);
        this.#running.delete(job.jobId);
      });
    this.#running.set(job.jobId, { controller, done });
  }

  /** Stops a job running here (its record was already set CANCELED); false when it runs elsewhere. */
  abort(jobId: number): boolean {
    const running = this.#running.get(jobId);
    running?.controller.abort();
    return running !== undefined;
  }

  /** Waits for the jobs running here to end (the Gate fails their calls when it shuts down). */
  async close(): Promise<void> {
    await Promise.all([...this.#running.values()].map((r) => r.done));
    this.#leases.close();
  }

  async #run(job: JobRecord, plan: FitPlan, controller: AbortController): Promise<void> {
    const { gate, logger, options } = this.#ctx;
    const log = logger.child({ jobId: job.jobId, serviceId: job.serviceId });
    const { leaseMs } = options;
    const lost = () => {
      if (!controller.signal.aborted) log.info('fitting job canceled or expired elsewhere; stopping it');
      controller.abort();
    };
    const progress = new ProgressWriter(async (percentage) => {
      try {
        if (!(await this.#store.reportProgress(job.jobId, this.runnerId, percentage, leaseMs))) lost();
      } catch (err) {
        log.warn({ err }, 'fitting progress not recorded');
      }
    });
    try {
      const content = await this.#store.readDataset(plan.dataset.id);
      if (!content)
        throw gatewayError('ENTITY_NOT_FOUND_BY_ID', {
          param: 'datasetId',
          args: { entity: 'dataset', id: plan.dataset.id },
          message: `Dataset ${plan.dataset.id} was deleted before the fit started`,
        });
      await mkdir(job.modelDir, { recursive: true }).catch((err: unknown) =>
        log.warn({ err }, 'model directory not created; the service must create it'),
      );
      if (controller.signal.aborted) return;

      const call = gate.open(
        plan.base,
        {
          fit: {
            trainData: payloadOf(content.content, plan.dataset),
            ...(content.targets ? { targetsData: payloadOf(content.targets, plan.dataset) } : {}),
            ...(job.config !== null ? { config: { json: job.config } } : {}),
            modelDir: job.modelDir,
            ...(job.previousModelDir ? { previousModelDir: job.previousModelDir } : {}),
            targetServiceInfo: { accountId: job.accountId, modelId: job.serviceId, modelName: plan.serviceName },
            datasetInfo: {
              accountId: plan.dataset.accountId,
              datasetId: plan.dataset.id,
              name: plan.dataset.name,
              type: plan.dataset.dataType,
            },
          },
        },
        {
          headers: { ...plan.headers, [GateHeaders.fitJobId]: String(job.jobId) },
          signal: controller.signal,
          timeoutMs: options.fitTimeoutSec * 1000,
        },
      );
      if (!(await this.#store.startJob(job.jobId, this.runnerId, leaseMs))) {
        call.cancel(gatewayError('REQUEST_CANCELED'));
        return;
      }
      log.info({ baseServiceId: plan.base.id, requestId: call.requestId }, 'fitting job running');
      this.#ctx.events.emit('fitJob', { status: 'RUNNING' });

      let finished = false;
      for await (const answer of call) {
        if (answer.body === 'fitStatus') progress.set(clampPercentage(answer.fitStatus?.percentage));
        else if (answer.body === 'fit') finished = true;
        else
          throw gatewayError('SERVICE_BAD_RESPONSE', {
            args: { service: plan.base.name, reason: `a ${answer.body ?? 'bodiless'} frame answered fit` },
          });
      }
      if (!finished)
        throw gatewayError('SERVICE_BAD_RESPONSE', { args: { service: plan.base.name, reason: 'the fit ended without an answer' } });
      await progress.flush();
      const done = await this.#store.completeJob(job.jobId, this.runnerId);
      if (!done) return;
      const service = await this.#store.getDerived(job.serviceId);
      if (service) this.#derived.register(service);
      log.info('fitting job succeeded');
      this.#ctx.events.emit('fitJob', { status: 'SUCCESS' });
    } catch (err) {
      await progress.flush();
      if (controller.signal.aborted) {
        await removeQuietly(job.modelDir);
        return; // canceled: the record says so already
      }
      const error = asJobFailure(err);
      const failed = await this.#store.failJob(job.jobId, this.runnerId, jobErrorOf(error));
      if (failed) {
        log.info({ code: error.code, message: error.message }, 'fitting job failed');
        this.#ctx.events.emit('fitJob', { status: 'FAILED' });
      }
      await removeQuietly(job.modelDir);
    }
  }
}

/** The fit's payload: text datasets as the JSON member (as SDKs read `trainData`), others as bytes. */
function payloadOf(data: Buffer, dataset: DatasetRecord): PayloadProto {
  return dataset.encoding === 'text'
    ? { dataType: dataset.dataType, json: data.toString('utf8') }
    : { dataType: dataset.dataType, protobuf: data };
}

function clampPercentage(value: number | undefined): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) ? Math.min(100, Math.max(0, Math.round(n))) : 0;
}

/** The gateway shutting down mid-fit reads as an interrupted job, not as a service error. */
function asJobFailure(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err.code === 'GATE_IS_SHUT_DOWN' ? gatewayError('FITTING_INTERRUPTED') : err;
  return gatewayError('INTERNAL_ERROR', { cause: err, message: `The fit could not be run: ${(err as Error)?.message ?? String(err)}` });
}

async function removeQuietly(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * Records the latest percentage without queueing one write per message: while a write is in flight,
 * newer values replace each other and only the last one is written next.
 */
class ProgressWriter {
  #latest: number | undefined;
  #written: number | undefined;
  #loop: Promise<void> | undefined;

  constructor(private readonly write: (percentage: number) => Promise<void>) {}

  set(percentage: number): void {
    this.#latest = percentage;
    this.#loop ??= this.#drain();
  }

  async flush(): Promise<void> {
    await this.#loop;
  }

  async #drain(): Promise<void> {
    while (this.#latest !== undefined && this.#latest !== this.#written) {
      const value = this.#latest;
      await this.write(value);
      this.#written = value;
    }
    this.#loop = undefined;
  }
}
