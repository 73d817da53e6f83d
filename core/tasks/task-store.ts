/**
 * The asynchronous-task store: records of async predict tasks and their explicit transitions
 * (spec section 3; docs/design.md, decisions and interfaces).
 *
 *   create ──► QUEUED ──claim──► PROCESSING ──complete──► COMPLETED
 *                 │                 │   ▲ └─────fail─────► CANCELED (error kept)
 *                 │                 │   └ claim again once the lease expired (a crashed gateway's task)
 *                 └──────cancel─────┴──────cancel────────► CANCELED (no error)
 *
 * Delivery is at least once: a task whose worker stops renewing its lease is claimed again, so
 * processing must tolerate a repeat. Every write by a worker carries the `leaseToken` its claim
 * returned (a fencing token): once the lease was lost and the task re-claimed, or the task was
 * canceled, the old worker's `renewLeases`/`complete`/`fail` refuse it and change nothing.
 *
 * One implementation, `DocTaskStore` (doc-task-store.ts), on the store port: embedded (the default),
 * MongoDB or memory; on the shared homes the caps and the claim hold across every process. Times are
 * Unix milliseconds from the store's clock (`TaskStoreOptions.now`).
 */
import { GatewayError, argsWithParam, errorTypeForStatus, paramOfArgs, renderErrorBody } from '../errors.js';

export type TaskStatus = 'QUEUED' | 'PROCESSING' | 'COMPLETED' | 'CANCELED';
export const FINAL_STATUSES: readonly TaskStatus[] = ['COMPLETED', 'CANCELED'];
export const isFinalStatus = (status: TaskStatus): boolean => status === 'COMPLETED' || status === 'CANCELED';

/** The three creation endpoints: `async/predict`, `…/predict-with-config`, `…/predict-with-config-v2`. */
export type TaskRequestKind = 'raw' | 'object' | 'string';

/** What a task was created with; `body` is kept byte for byte (several MB work). */
export interface TaskRequestInput {
  kind: TaskRequestKind;
  /** The creating plugin decides the content, e.g. raw: the HTTP body; object: JSON of `data`; string: `data`. */
  body: Buffer;
  /** `?configId=` of the raw variant. */
  configId?: number;
  dataType?: string;
  /** The predict configuration as text (JSON text for `object`, the given string for `string`). */
  config?: string;
  /** The Content-Type the raw variant's body came with (it decides how the body reaches the service). */
  contentType?: string;
  /** The name of the API key that created the task: the service gets it as PLATFORM-API-KEY-NAME. */
  keyName?: string;
}

/** The request as kept in the record: everything but the body, which `claim` and `getRequestBody` return. */
export interface TaskRequestInfo {
  kind: TaskRequestKind;
  configId?: number;
  dataType?: string;
  config?: string;
  contentType?: string;
  keyName?: string;
  bodyBytes: number;
}

/** A successful outcome: the service's answer. */
export interface TaskResult {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A failed outcome (the task ends CANCELED); the fields of a catalog `GatewayError`. */
export interface TaskError {
  status: number;
  code: string;
  message: string;
  args: Record<string, string>;
}

export interface TaskRecord {
  /** UUID text. */
  taskId: string;
  /** The account on whose behalf the task was created; the caps count per caller. */
  callerId: number;
  serviceId: number;
  /** The account owning the service. */
  serviceAccountId: number;
  status: TaskStatus;
  createdAt: number;
  /** Set when the task becomes final (COMPLETED or CANCELED), null before. */
  completedAt: number | null;
  request: TaskRequestInfo;
  /** The current claim's fencing token; null unless PROCESSING. */
  leaseToken: string | null;
  /** The claim is the worker's until then; null unless PROCESSING. */
  leaseUntil: number | null;
  /** The worker that claimed it last (diagnostics only). */
  workerId: string | null;
  /** How many times the task was claimed (a value above 1 means a re-claim after a lost lease). */
  attempt: number;
  /** Outcome summaries; the result body is read with `getResult`. */
  result: { statusCode: number; headers: Record<string, string>; bodyBytes: number } | null;
  error: TaskError | null;
}

/** A claimed task: its record and the body it was created with, read in the claim. */
export interface ClaimedTask extends TaskRecord {
  /** Null when the stored body is missing or damaged (the worker fails the task). */
  requestBody: Buffer | null;
}

/** A worker's hold on a PROCESSING task: the fencing token its claim returned. */
export interface TaskLease {
  taskId: string;
  leaseToken: string;
}

export interface CreateTaskInput {
  callerId: number;
  serviceId: number;
  serviceAccountId: number;
  request: TaskRequestInput;
}

export interface CreateLimits {
  /** At most this many QUEUED tasks per caller (spec section 8: the account's rate, capped at 250). */
  maxQueuedPerAccount: number;
}

export interface ClaimOptions {
  workerId: string;
  /** The lease lasts this long from the claim; renew it well before it runs out. */
  leaseMs: number;
  /** At most this many PROCESSING tasks per caller (spec section 8: the account's rate, capped at 50). */
  maxRunningPerAccount: number | ((accountId: number) => number);
  /**
   * Only tasks of these services (a gateway passes those with an instance connected to it, so a task
   * waits QUEUED for a process that can run it instead of being taken by one that cannot). Absent:
   * any service; empty: none.
   */
  serviceIds?: readonly number[];
}

export type StoredResult =
  /** The task is QUEUED or PROCESSING. */
  | { kind: 'pending' }
  /** No task, or no outcome kept: canceled by the caller, or its stored result was removed. */
  | { kind: 'missing' }
  | ({ kind: 'result' } & TaskResult)
  /** The task ended with an error (status CANCELED). */
  | ({ kind: 'error' } & TaskError)
  /** The stored result exists but cannot be read back intact (ASYNC_RESPONSE_IS_CORRUPTED). */
  | { kind: 'corrupted' };

/** Where a page of a caller's tasks ended: its last task. */
export interface TaskCursor {
  createdAt: number;
  taskId: string;
}

export interface TaskStore {
  /**
   * Stores a new QUEUED task with a fresh UUID. Throws `TOO_MANY_IDLE_ASYNC_TASKS` (429) when the
   * caller already has `maxQueuedPerAccount` QUEUED tasks; nothing is stored then.
   */
  create(input: CreateTaskInput, limits: CreateLimits): Promise<TaskRecord>;

  /**
   * Takes the oldest claimable task (by `createdAt`, ties in any order) of `serviceIds`: QUEUED of a
   * caller below its running cap, or PROCESSING whose lease ran out. Sets PROCESSING, a new random
   * `leaseToken`, `leaseUntil = now + leaseMs` and `attempt + 1`. Returns null when nothing is
   * claimable (or, rarely, when heavy contention used up its retries: poll again). A re-claimed task
   * already counts as running, so it is taken even when its caller is at the cap. Never hands one task
   * to two claimers. `attempt` tells a worker how often the task was taken; giving up on a repeat is
   * the worker's call. The claimed task comes with its request body, so the worker reads it once.
   */
  claim(options: ClaimOptions): Promise<ClaimedTask | null>;

  /**
   * Extends the leases of PROCESSING tasks, all in one batch; returns the IDs of those still held.
   * A lease whose token no longer matches (lost, re-claimed or canceled) is left unchanged.
   */
  renewLeases(leases: readonly TaskLease[], leaseMs: number): Promise<Set<string>>;

  /**
   * Ends leases at once, for a worker that stops without finishing its tasks (a gateway shutting
   * down): each PROCESSING task whose token still matches gets a lease that has run out, so any
   * worker claims it now instead of when the lease would have expired. As after a crash, the next
   * claim counts as a new attempt. A lease whose token no longer matches is left unchanged.
   */
  releaseLeases(leases: readonly TaskLease[]): Promise<void>;

  /** PROCESSING → COMPLETED with the result, when the token still matches; false otherwise. */
  complete(taskId: string, leaseToken: string, result: TaskResult): Promise<boolean>;

  /** PROCESSING → CANCELED with the error kept, when the token still matches; false otherwise. */
  fail(taskId: string, leaseToken: string, error: TaskError): Promise<boolean>;

  /**
   * QUEUED or PROCESSING → CANCELED with `completedAt` and no error; a running worker finds out when
   * its next `renewLease` returns false. Returns the status before the call, or null when there is no
   * such task. A final task (COMPLETED or CANCELED) is left unchanged and its status returned.
   */
  cancel(taskId: string): Promise<TaskStatus | null>;

  get(taskId: string): Promise<TaskRecord | null>;

  /**
   * The caller's tasks, newest first (by `createdAt`, then task ID): at most `limit`, those after
   * `after` when given (the last task of the previous page). Final tasks stay listed until purged.
   */
  listOf(callerId: number, options: { limit: number; after?: TaskCursor }): Promise<TaskRecord[]>;

  /** The creation body, or null when the task or its stored body is missing or damaged. */
  getRequestBody(taskId: string): Promise<Buffer | null>;

  getResult(taskId: string): Promise<StoredResult>;

  countQueued(accountId: number): Promise<number>;

  /** PROCESSING tasks of the caller, including those whose lease ran out and wait to be re-claimed. */
  countRunning(accountId: number): Promise<number>;

  /** Bytes the caller's tasks keep stored (request bodies and results), for the storage quota. */
  storedBytes(accountId: number): Promise<number>;

  /**
   * Removes the tasks final for longer than the retention (`completedAt < now - retentionMs`), with
   * their stored files; returns how many tasks were removed. Call it periodically (the reaper).
   */
  purgeExpired(now?: number): Promise<number>;

  /** Resolves when the store answers (readiness probes); rejects when it cannot be reached. */
  ping(): Promise<void>;

  close(): Promise<void>;
}

export interface TaskStoreOptions {
  /** How long final tasks and their results are kept (spec: 7 days). */
  retentionMs: number;
  /** The clock; injected by tests. */
  now?: () => number;
}

/** Bodies up to this size stay in the record; longer results go to file storage (spec section 8). */
export const RESULT_INLINE_MAX_BYTES = 150;
/** Request bodies above this go to file storage (GridFS / files), far below MongoDB's 16 MB documents. */
export const REQUEST_INLINE_MAX_BYTES = 256 * 1024;

export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The stored form of a catalog error: what its rendered body shows (internal details stay out). The
 * field it is about is kept as `args.param`, as gRPC carries it (core/grpc/api-error.ts).
 */
export function taskErrorFrom(err: GatewayError): TaskError {
  const { message, args, param } = renderErrorBody(err).error;
  return { status: err.status, code: err.code, message, args: { ...argsWithParam(args, param) } };
}

/** A stored task error as the catalog error it was (for the result endpoint to throw). */
export function gatewayErrorFromTask(error: TaskError): GatewayError {
  const { code, status, message, args } = error;
  return new GatewayError({ code, status, type: errorTypeForStatus(status), message, args, param: paramOfArgs(args) });
}

export function runningCapFor(options: ClaimOptions, accountId: number): number {
  const cap = options.maxRunningPerAccount;
  return typeof cap === 'function' ? cap(accountId) : cap;
}
