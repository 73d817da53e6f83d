/**
 * The workers of one gateway process: they claim tasks from the store, send each to an instance of its
 * service through the Gate, keep the claim's lease alive while the service works, and store the
 * outcome. Several processes sharing one MongoDB each run a pool; the store's atomic claim hands a
 * task to one of them, and a task whose process died is claimed again once its lease runs out.
 *
 * Cancel: in this process the running call is cancelled at once (the service gets `cancel`); a task
 * running in another process is cancelled by that process's worker at its next lease renewal, which
 * the store then refuses.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  gatewayError, taskErrorFrom, toGatewayError,
  type PluginContext, type ServiceAnswer, type ServiceCall, type ServiceEntry, type TaskRecord, type TaskResult,
} from '../../core/plugins/index.js';
import { runningCap } from './limits.js';
import type { AsyncPredictOptions } from './options.js';
import { predictRequestOf, resultOf } from './transform.js';

/** Failures after which the same claim may dispatch again: the instance went away, not the request. */
const RETRYABLE = new Set(['SERVICE_DISCONNECTED', 'NO_ACTIVE_INSTANCES']);
const INSTANCE_CHECK_MS = 50;

interface Job {
  readonly task: TaskRecord;
  readonly leaseToken: string;
  /** Aborted when the task was cancelled, its lease was lost, or the pool closes: nothing is written then. */
  readonly stop: AbortController;
  renewing: boolean;
  done?: Promise<void>;
}

export class WorkerPool {
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #ctx: PluginContext<AsyncPredictOptions>;
  readonly #jobs = new Map<string, Job>();
  #filling: Promise<void> | undefined;
  #refill = false;
  #timer: NodeJS.Timeout | undefined;
  #running = false;

  constructor(ctx: PluginContext<AsyncPredictOptions>) {
    this.#ctx = ctx;
  }

  /** Tasks this process is working on now. */
  get activeTasks(): number {
    return this.#jobs.size;
  }

  start(): void {
    this.#running = true;
    this.#timer = setInterval(() => this.wake(), this.#ctx.options.pollMs);
    this.#timer.unref();
    this.wake();
  }

  /** Claims work until the pool is full or nothing is claimable (a task created here, a job ended, a poll). */
  wake(): void {
    if (!this.#running) return;
    if (this.#filling) {
      this.#refill = true;
      return;
    }
    this.#filling = this.#fill().finally(() => (this.#filling = undefined));
  }

  /** Stops the task's running call at once, if this process runs it (the store has already cancelled it). */
  cancelLocal(taskId: string): void {
    this.#jobs.get(taskId)?.stop.abort();
  }

  /**
   * Stops claiming and ends the running jobs without writing: their tasks keep their lease and are
   * claimed again when it runs out (by another process, or by this gateway after a restart).
   */
  async close(): Promise<void> {
    this.#running = false;
    clearInterval(this.#timer);
    for (const job of this.#jobs.values()) job.stop.abort();
    await this.#filling; // a task claimed meanwhile starts stopped (#startJob)
    await Promise.allSettled([...this.#jobs.values()].map((job) => job.done));
  }

  /**
   * One claim at a time: the claims of several processes already contend on one store, and parallel
   * claims from one process measured slower on the MongoDB test server (bench/async.ts).
   */
  async #fill(): Promise<void> {
    const { store, options, logger } = this.#ctx;
    try {
      do {
        this.#refill = false;
        while (this.#running && this.#jobs.size < options.concurrency) {
          const serviceIds = this.#servedServiceIds();
          if (serviceIds.length === 0) break;
          const task = await store.claim({ workerId: this.workerId, leaseMs: options.leaseMs, maxRunningPerAccount: this.#runningCapOf, serviceIds });
          if (!task) break;
          this.#startJob(task);
        }
      } while (this.#refill && this.#running);
    } catch (err) {
      logger.warn({ err }, 'claiming async tasks failed; trying again at the next poll');
    }
  }

  /** Services with an instance connected here: only their tasks are claimed (others wait for theirs). */
  #servedServiceIds(): number[] {
    const ids: number[] = [];
    for (const service of this.#ctx.directory.services()) if (this.#ctx.gate.hasInstances(service.id)) ids.push(service.id);
    return ids;
  }

  readonly #runningCapOf = (accountId: number): number =>
    runningCap(this.#ctx.directory.findAccount(accountId)?.requestsPerSecond ?? this.#ctx.config.limits.defaultRequestsPerSecond);

  #startJob(task: TaskRecord): void {
    const job: Job = { task, leaseToken: task.leaseToken ?? '', stop: new AbortController(), renewing: false };
    if (!this.#running) job.stop.abort();
    this.#jobs.set(task.taskId, job);
    job.done = this.#run(job).finally(() => {
      this.#jobs.delete(task.taskId);
      this.wake();
    });
  }

  async #run(job: Job): Promise<void> {
    const { store, logger, options } = this.#ctx;
    const { taskId } = job.task;
    const renewal = setInterval(() => void this.#renew(job), Math.max(10, Math.floor(options.leaseMs / 3)));
    try {
      const result = await this.#process(job);
      if (job.stop.signal.aborted) return;
      if (!(await store.complete(taskId, job.leaseToken, result))) logger.debug({ taskId }, 'async task result refused: cancelled or re-claimed meanwhile');
    } catch (err) {
      if (job.stop.signal.aborted) return;
      const error = toGatewayError(err);
      if (error.code === 'GATE_IS_SHUT_DOWN') {
        logger.info({ taskId }, 'gateway shutting down: async task left to be claimed again');
        return;
      }
      if (error.status >= 500) logger.warn({ taskId, code: error.code, err: error.cause ?? error.message }, 'async task failed');
      try {
        await store.fail(taskId, job.leaseToken, taskErrorFrom(error));
      } catch (storeErr) {
        logger.warn({ taskId, err: storeErr }, 'async task outcome not stored; it will be claimed again');
      }
    } finally {
      clearInterval(renewal);
    }
  }

  async #process(job: Job): Promise<TaskResult> {
    const { store, directory, options } = this.#ctx;
    const { task } = job;
    if (task.attempt > options.maxAttempts) {
      throw gatewayError('ASYNC_TASK_ABANDONED', { args: { taskId: task.taskId, attempts: task.attempt - 1 } });
    }
    const service = directory.serviceById(task.serviceId);
    if (!service) throw gatewayError('SERVICE_NOT_FOUND', { args: { account: task.serviceAccountId, model: task.serviceId } });
    const body = await store.getRequestBody(task.taskId);
    if (!body) throw gatewayError('ASYNC_REQUEST_BODY_WAS_LOST', { args: { taskId: task.taskId } });
    const request = predictRequestOf(task.request, body);
    for (let dispatch = 0; ; dispatch++) {
      try {
        return await this.#dispatch(job, service, { predict: request });
      } catch (err) {
        const retry = dispatch < options.retries && RETRYABLE.has(toGatewayError(err).code) && (await this.#instanceBack(service, job.stop.signal));
        if (!retry) throw err;
      }
    }
  }

  async #dispatch(job: Job, service: ServiceEntry, request: { predict: ReturnType<typeof predictRequestOf> }): Promise<TaskResult> {
    const call: ServiceCall = this.#ctx.gate.open(service, request, {
      headers: { 'Z-requestId': job.task.taskId, 'Z-callerAccountId': String(job.task.callerId) },
      signal: job.stop.signal,
      timeoutMs: this.#ctx.options.taskTimeoutMs,
    });
    const answers: ServiceAnswer[] = [];
    for await (const answer of call) {
      if (answer.body !== 'predict' && answer.body !== 'partialPredict') {
        const error = gatewayError('SERVICE_BAD_RESPONSE', { args: { service: service.name, reason: `a ${answer.body ?? 'bodiless'} frame answered a predict request` } });
        call.cancel(error);
        throw error;
      }
      answers.push(answer);
    }
    return resultOf(answers);
  }

  /** Waits up to `instanceWaitMs` for an instance of the service; false when none came (or the job stopped). */
  async #instanceBack(service: ServiceEntry, signal: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + this.#ctx.options.instanceWaitMs;
    for (;;) {
      if (signal.aborted || !this.#running) return false;
      if (this.#ctx.gate.hasInstances(service.id)) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, INSTANCE_CHECK_MS));
    }
  }

  async #renew(job: Job): Promise<void> {
    if (job.renewing || job.stop.signal.aborted) return;
    job.renewing = true;
    try {
      if (!(await this.#ctx.store.renewLease(job.task.taskId, job.leaseToken, this.#ctx.options.leaseMs))) {
        this.#ctx.logger.debug({ taskId: job.task.taskId }, 'async task cancelled or its lease lost: stopping it');
        job.stop.abort();
      }
    } catch (err) {
      this.#ctx.logger.warn({ taskId: job.task.taskId, err }, 'lease renewal failed; trying again');
    } finally {
      job.renewing = false;
    }
  }
}
