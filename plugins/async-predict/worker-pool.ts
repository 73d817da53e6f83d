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
  every,
  AnswerCollector,
  GateHeaders,
  GatewayError,
  LeaseKeeper,
  fromServiceError,
  gatewayError,
  serviceHeaders,
  taskErrorFrom,
  toGatewayError,
  type ClaimedTask,
  type PluginContext,
  type PredictRequestProto,
  type ServiceAnswer,
  type ServiceCall,
  type ServiceEntry,
  type TaskRecord,
  type TaskResult,
} from '../../core/plugins/index.js';
import { runningCap } from './limits.js';
import type { AsyncPredictOptions } from './options.js';
import { predictRequestOf, resultOf, resultOfFrames } from './transform.js';

/** Failures after which the same claim may dispatch again: the instance went away, not the request. */
const RETRYABLE = new Set(['SERVICE_DISCONNECTED', 'NO_ACTIVE_INSTANCES']);

/** A task ready to be sent: its job and its predict request. */
interface Item {
  readonly job: Job;
  readonly request: PredictRequestProto;
}

interface Job {
  readonly task: ClaimedTask;
  readonly leaseToken: string;
  /** Aborted when the task was cancelled, its lease was lost, or the pool closes: nothing is written then. */
  readonly stop: AbortController;
  done?: Promise<void>;
  /** When this worker claimed it (epoch ms), for the processing-time metric. */
  readonly claimedAt: number;
}

export class WorkerPool {
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #ctx: PluginContext<AsyncPredictOptions>;
  readonly #jobs = new Map<string, Job>();
  /** The leases of every running job, renewed together. */
  readonly #leases: LeaseKeeper<Job>;
  /** Jobs that ended unfinished because the gateway shuts down: close() releases their leases. */
  readonly #leftBehind: Job[] = [];
  #filling: Promise<void> | undefined;
  #refill = false;
  #stopPolling: (() => void) | undefined;
  #stopWatchingInstances: (() => void) | undefined;
  #running = false;

  constructor(ctx: PluginContext<AsyncPredictOptions>) {
    this.#ctx = ctx;
    const { leaseMs } = ctx.options;
    this.#leases = new LeaseKeeper<Job>({
      intervalMs: Math.max(10, Math.floor(leaseMs / 3)),
      renew: async (jobs) => {
        const held = await ctx.store.renewLeases(
          jobs.map((job) => ({ taskId: job.task.taskId, leaseToken: job.leaseToken })),
          leaseMs,
        );
        return new Set(jobs.filter((job) => held.has(job.task.taskId)));
      },
      onError: (err) => ctx.logger.warn({ err }, 'async lease renewal failed; trying again'),
    });
  }

  /** Claims now, at every poll (tasks created on other gateways), and when an instance connects here. */
  start(): void {
    this.#running = true;
    this.#stopPolling = every(this.#ctx.options.pollMs, () => this.wake());
    this.#stopWatchingInstances = this.#ctx.gate.onInstance(() => this.wake());
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
   * Stops claiming and ends the running jobs without writing, then releases their leases (and those
   * of tasks the Gate's shutdown left unfinished), so another gateway on the store claims them at
   * once rather than when the leases run out. Should the release fail, they still run out.
   */
  async close(): Promise<void> {
    this.#running = false;
    this.#stopPolling?.();
    this.#stopWatchingInstances?.();
    for (const job of this.#jobs.values()) job.stop.abort();
    await this.#filling; // a task claimed meanwhile starts stopped (#startGroup)
    await Promise.allSettled([...this.#jobs.values()].map((job) => job.done));
    this.#leases.close();
    const left = this.#leftBehind.splice(0).map((job) => ({ taskId: job.task.taskId, leaseToken: job.leaseToken }));
    if (left.length === 0) return;
    try {
      await this.#ctx.store.releaseLeases(left);
    } catch (err) {
      this.#ctx.logger.warn(
        { err, tasks: left.length },
        'async task leases not released; the tasks are claimed again when the leases run out',
      );
    }
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
          const task = await store.claim({
            workerId: this.workerId,
            leaseMs: options.leaseMs,
            maxRunningPerAccount: this.#runningCapOf,
            serviceIds,
          });
          if (!task) break;
          if (this.#ctx.directory.serviceById(task.serviceId)?.batch && options.batchSize > 1) await this.#startBatches(task);
          else this.#startGroup([task]);
        }
      } while (this.#refill && this.#running);
    } catch (err) {
      logger.warn({ err }, 'claiming async tasks failed; trying again at the next poll');
    }
  }

  /**
   * A service that takes `batch` requests: more of its waiting tasks are claimed at once (up to
   * `batchSize`), and those with the same config go as one batch (a batch has one config).
   */
  async #startBatches(first: ClaimedTask): Promise<void> {
    const { store, options } = this.#ctx;
    const tasks = [first];
    try {
      while (tasks.length < options.batchSize && this.#running && this.#jobs.size + tasks.length < options.concurrency) {
        const more = await store.claim({
          workerId: this.workerId,
          leaseMs: options.leaseMs,
          maxRunningPerAccount: this.#runningCapOf,
          serviceIds: [first.serviceId],
        });
        if (!more) break;
        tasks.push(more);
      }
    } catch (err) {
      this.#ctx.logger.warn({ err }, 'claiming more tasks for a batch failed; sending those claimed');
    }
    const byConfig = new Map<string | undefined, ClaimedTask[]>();
    for (const task of tasks) byConfig.set(task.request.config, [...(byConfig.get(task.request.config) ?? []), task]);
    for (const group of byConfig.values()) this.#startGroup(group);
  }

  /**
   * Services this gateway can answer now (an instance connected here, or one of a fallback's): only
   * their tasks are claimed, others wait for a gateway that can.
   */
  #servedServiceIds(): number[] {
    const ids: number[] = [];
    for (const service of this.#ctx.directory.services()) if (this.#ctx.gate.canServe(service.id)) ids.push(service.id);
    return ids;
  }

  readonly #runningCapOf = (accountId: number): number =>
    runningCap(this.#ctx.directory.findAccount(accountId)?.requestsPerSecond ?? this.#ctx.config.limits.defaultRequestsPerSecond);

  /** Runs tasks of one service as one dispatch: a `predict` for one task, a `batch` for several. */
  #startGroup(tasks: readonly ClaimedTask[]): void {
    const claimedAt = Date.now();
    const jobs: Job[] = tasks.map((task) => ({ task, leaseToken: task.leaseToken ?? '', stop: new AbortController(), claimedAt }));
    for (const task of tasks) this.#ctx.events.emit('task', { status: 'PROCESSING', queueWaitMs: Math.max(0, claimedAt - task.createdAt) });
    for (const job of jobs) {
      if (!this.#running) job.stop.abort();
      this.#jobs.set(job.task.taskId, job);
      this.#leases.hold(job, () => {
        this.#ctx.logger.debug({ taskId: job.task.taskId }, 'async task cancelled or its lease lost: stopping it');
        job.stop.abort();
      });
    }
    const done = this.#runGroup(jobs).finally(() => {
      for (const job of jobs) {
        this.#leases.release(job);
        this.#jobs.delete(job.task.taskId);
      }
      this.wake();
    });
    for (const job of jobs) job.done = done;
  }

  async #runGroup(jobs: readonly Job[]): Promise<void> {
    const outcomes = await this.#processGroup(jobs);
    await Promise.all(jobs.map((job) => this.#settle(job, outcomes.get(job) ?? gatewayError('INTERNAL_ERROR'))));
  }

  /** Stores a task's outcome, unless the task was stopped (cancelled, lease lost, pool closing). */
  async #settle(job: Job, outcome: TaskResult | GatewayError): Promise<void> {
    const { store, logger } = this.#ctx;
    const { taskId } = job.task;
    if (job.stop.signal.aborted) {
      // Stopped by close(), not cancelled or lost (their release would be refused anyway, by the token).
      if (!this.#running) this.#leftBehind.push(job);
      return;
    }
    try {
      if (!(outcome instanceof GatewayError)) {
        if (await store.complete(taskId, job.leaseToken, outcome))
          this.#ctx.events.emit('task', { status: 'COMPLETED', processingMs: Date.now() - job.claimedAt });
        else logger.debug({ taskId }, 'async task result refused: cancelled or re-claimed meanwhile');
        return;
      }
      if (outcome.code === 'GATE_IS_SHUT_DOWN') {
        logger.info({ taskId }, 'gateway shutting down: async task left to be claimed again');
        // Released by close(), not now: this pool could claim it again before it stops.
        this.#leftBehind.push(job);
        return;
      }
      if (outcome.status >= 500) logger.warn({ taskId, code: outcome.code, err: outcome.cause ?? outcome.message }, 'async task failed');
      if (await store.fail(taskId, job.leaseToken, taskErrorFrom(outcome)))
        this.#ctx.events.emit('task', { status: 'FAILED', processingMs: Date.now() - job.claimedAt });
    } catch (err) {
      logger.warn({ taskId, err }, 'async task outcome not stored; it will be claimed again');
    }
  }

  /** Each task's result or error; tasks that cannot be sent (lost body, …) fail alone. */
  async #processGroup(jobs: readonly Job[]): Promise<Map<Job, TaskResult | GatewayError>> {
    const { directory, options } = this.#ctx;
    const outcomes = new Map<Job, TaskResult | GatewayError>();
    const ready: Item[] = [];
    const service = directory.serviceById(jobs[0]!.task.serviceId);
    for (const job of jobs) {
      const { task } = job;
      try {
        if (task.attempt > options.maxAttempts) {
          throw gatewayError('ASYNC_TASK_ABANDONED', { args: { taskId: task.taskId, attempts: task.attempt - 1 } });
        }
        if (!service) throw gatewayError('SERVICE_NOT_FOUND', { args: { account: task.serviceAccountId, model: task.serviceId } });
        if (!task.requestBody) throw gatewayError('ASYNC_REQUEST_BODY_WAS_LOST', { args: { taskId: task.taskId } });
        ready.push({ job, request: predictRequestOf(task.request, task.requestBody) });
      } catch (err) {
        outcomes.set(job, toGatewayError(err));
      }
    }
    if (!service || ready.length === 0) return outcomes;
    const stop = ready.length === 1 ? ready[0]!.job.stop.signal : whenAllAborted(ready.map((r) => r.job.stop.signal));
    for (let dispatch = 0; ; dispatch++) {
      try {
        for (const [job, outcome] of await this.#dispatch(service, ready, stop)) outcomes.set(job, outcome);
        return outcomes;
      } catch (err) {
        const error = toGatewayError(err);
        const retry = dispatch < options.retries && RETRYABLE.has(error.code) && (await this.#instanceBack(service, stop));
        if (!retry) {
          for (const { job } of ready) outcomes.set(job, error);
          return outcomes;
        }
      }
    }
  }

  /**
   * One request to the service: `predict` for one task; for several, one `batch` whose items carry
   * their own requestIds (1…n), matched back to their tasks. `stop` cancels the call at the service.
   */
  async #dispatch(service: ServiceEntry, items: readonly Item[], stop: AbortSignal): Promise<Map<Job, TaskResult | GatewayError>> {
    const headersOf = (task: TaskRecord) =>
      serviceHeaders({ requestId: task.taskId, callerAccountId: task.callerId, keyName: task.request.keyName });
    const timeoutMs = this.#ctx.options.taskTimeoutMs;
    const badResponse = (reason: string) => gatewayError('SERVICE_BAD_RESPONSE', { args: { service: service.name, reason } });
    const single = items.length === 1 ? items[0]! : undefined;
    const call: ServiceCall = single
      ? this.#ctx.gate.open(service, { predict: single.request }, { headers: headersOf(single.job.task), signal: stop, timeoutMs })
      : this.#ctx.gate.open(
          service,
          {
            batch: {
              data: items.map(({ job, request }, i) => ({ requestId: i + 1, data: request.data, headers: headersOf(job.task) })),
              ...(items[0]!.request.config ? { config: items[0]!.request.config } : {}),
            },
          },
          { headers: { [GateHeaders.requestId]: randomUUID() }, signal: stop, timeoutMs },
        );
    const expected = single ? ['predict', 'partialPredict'] : ['batch'];
    const maxAnswerBytes = this.#ctx.config.gate.maxAnswerBytes;
    // A single answer is folded in as it comes, so that its bound holds while it arrives.
    const collector = new AnswerCollector(service.name, maxAnswerBytes);
    const answers: ServiceAnswer[] = [];
    for await (const answer of call) {
      try {
        if (!expected.includes(answer.body ?? ''))
          throw badResponse(`a ${answer.body ?? 'bodiless'} frame answered a ${single ? 'predict' : 'batch'} request`);
        if (single) collector.add(answer);
        else answers.push(answer);
      } catch (err) {
        const error = toGatewayError(err);
        call.cancel(error);
        throw error;
      }
    }
    if (single) return new Map<Job, TaskResult | GatewayError>([[single.job, resultOf(collector.result())]]);
    const byRequestId = new Map((answers[0]?.batch?.data ?? []).map((item) => [Number(item.requestId), item]));
    return new Map(
      items.map(({ job }, i): [Job, TaskResult | GatewayError] => {
        const item = byRequestId.get(i + 1);
        if (item?.body === 'predict' && item.predict) {
          try {
            return [job, resultOfFrames([{ body: 'predict', predict: item.predict }], service.name, maxAnswerBytes)];
          } catch (err) {
            return [job, toGatewayError(err)];
          }
        }
        if (item?.body === 'error' && item.error) return [job, fromServiceError(item.error, service.name)];
        return [job, badResponse(`the batch answer has no item ${i + 1}`)];
      }),
    );
  }

  /** Waits up to `instanceWaitMs` for an instance of the service; false when none came (or the job stopped). */
  async #instanceBack(service: ServiceEntry, signal: AbortSignal): Promise<boolean> {
    if (!this.#running) return false;
    return this.#ctx.gate.whenInstance(service.id, this.#ctx.options.instanceWaitMs, signal);
  }
}

/** A signal that aborts once every one of `signals` has. */
function whenAllAborted(signals: readonly AbortSignal[]): AbortSignal {
  const all = new AbortController();
  const check = () => {
    if (signals.every((s) => s.aborted)) all.abort();
  };
  for (const signal of signals) signal.addEventListener('abort', check, { once: true });
  check();
  return all.signal;
}
