/**
 * The zero-setup task store: records in process memory, large bodies as files in a directory of its
 * own under `dataDir` (removed by `close()`). One gateway process only; tasks do not survive a restart.
 * Every transition runs synchronously between awaits, so each is atomic within the process; the caps
 * are checked and applied in the same synchronous step (count-then-insert).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { gatewayError } from '../errors.js';
import {
  DirectoryBlobStore,
  deletePayload,
  loadPayload,
  storePayload,
  type StoredPayload,
} from './payload-storage.js';
import {
  REQUEST_INLINE_MAX_BYTES,
  RESULT_INLINE_MAX_BYTES,
  isFinalStatus,
  runningCapFor,
  type ClaimedTask,
  type ClaimOptions,
  type CreateLimits,
  type CreateTaskInput,
  type StoredResult,
  type TaskError,
  type TaskLease,
  type TaskRecord,
  type TaskResult,
  type TaskStatus,
  type TaskStore,
  type TaskStoreOptions,
} from './task-store.js';

export interface MemoryTaskStoreOptions extends TaskStoreOptions {
  /** Large bodies go to `<dataDir>/task-files/<random>/`. */
  dataDir: string;
}

interface MemoryTask {
  record: TaskRecord;
  seq: number;
  requestBody: StoredPayload;
  resultBody: StoredPayload | null;
}

export class MemoryTaskStore implements TaskStore {
  /** The file storage, exposed for tests and diagnostics. */
  readonly files: DirectoryBlobStore;
  private readonly tasks = new Map<string, MemoryTask>();
  /** QUEUED and PROCESSING tasks, in creation order. */
  private readonly active = new Map<string, MemoryTask>();
  private readonly retentionMs: number;
  private readonly now: () => number;
  private seq = 0;

  constructor(options: MemoryTaskStoreOptions) {
    this.retentionMs = options.retentionMs;
    this.now = options.now ?? Date.now;
    this.files = new DirectoryBlobStore(join(options.dataDir, 'task-files', randomUUID()));
  }

  async create(input: CreateTaskInput, limits: CreateLimits): Promise<TaskRecord> {
    this.checkQueuedCap(input.callerId, limits);
    const taskId = randomUUID();
    const { body, ...requestInfo } = input.request;
    const requestBody = await storePayload(this.files, `${taskId}.request`, body, REQUEST_INLINE_MAX_BYTES, { taskId });
    try {
      this.checkQueuedCap(input.callerId, limits); // again: other creates may have run during the await
    } catch (err) {
      await deletePayload(this.files, requestBody);
      throw err;
    }
    const record: TaskRecord = {
      taskId,
      callerId: input.callerId,
      serviceId: input.serviceId,
      serviceAccountId: input.serviceAccountId,
      status: 'QUEUED',
      createdAt: this.now(),
      completedAt: null,
      request: { ...requestInfo, bodyBytes: body.length },
      leaseToken: null,
      leaseUntil: null,
      workerId: null,
      attempt: 0,
      result: null,
      error: null,
    };
    const task: MemoryTask = { record, seq: this.seq++, requestBody, resultBody: null };
    this.tasks.set(taskId, task);
    this.active.set(taskId, task);
    return copy(record);
  }

  async claim(options: ClaimOptions): Promise<ClaimedTask | null> {
    const services = options.serviceIds && new Set(options.serviceIds);
    if (services?.size === 0) return null;
    const now = this.now();
    const running = new Map<number, number>();
    for (const { record } of this.active.values()) {
      if (record.status === 'PROCESSING') running.set(record.callerId, (running.get(record.callerId) ?? 0) + 1);
    }
    let best: MemoryTask | undefined;
    for (const task of this.active.values()) {
      const { record } = task;
      if (services && !services.has(record.serviceId)) continue;
      const stale = record.status === 'PROCESSING' && (record.leaseUntil ?? 0) < now;
      if (record.status === 'QUEUED') {
        if ((running.get(record.callerId) ?? 0) >= runningCapFor(options, record.callerId)) continue;
      } else if (!stale) continue;
      if (!best || record.createdAt < best.record.createdAt || (record.createdAt === best.record.createdAt && task.seq < best.seq)) {
        best = task;
      }
    }
    if (!best) return null;
    Object.assign(best.record, {
      status: 'PROCESSING',
      leaseToken: randomUUID(),
      leaseUntil: now + options.leaseMs,
      workerId: options.workerId,
      attempt: best.record.attempt + 1,
    } satisfies Partial<TaskRecord>);
    const claimed = copy(best.record);
    return { ...claimed, requestBody: await this.readBody(best) };
  }

  async renewLeases(leases: readonly TaskLease[], leaseMs: number): Promise<Set<string>> {
    const held = new Set<string>();
    const until = this.now() + leaseMs;
    for (const { taskId, leaseToken } of leases) {
      const task = this.leased(taskId, leaseToken);
      if (!task) continue;
      task.record.leaseUntil = until;
      held.add(taskId);
    }
    return held;
  }

  async releaseLeases(leases: readonly TaskLease[]): Promise<void> {
    // Claims take a PROCESSING task whose lease is before now: one that ended a moment ago qualifies.
    const ended = this.now() - 1;
    for (const { taskId, leaseToken } of leases) {
      const task = this.leased(taskId, leaseToken);
      if (task) task.record.leaseUntil = ended;
    }
  }

  async complete(taskId: string, leaseToken: string, result: TaskResult): Promise<boolean> {
    if (!this.leased(taskId, leaseToken)) return false;
    const stored = await storePayload(this.files, `${taskId}.result`, result.body, RESULT_INLINE_MAX_BYTES, { taskId });
    const task = this.leased(taskId, leaseToken); // again: the lease may have gone during the await
    if (!task) {
      await deletePayload(this.files, stored);
      return false;
    }
    task.resultBody = stored;
    task.record.result = { statusCode: result.statusCode, headers: { ...result.headers }, bodyBytes: result.body.length };
    this.finish(task, 'COMPLETED');
    return true;
  }

  async fail(taskId: string, leaseToken: string, error: TaskError): Promise<boolean> {
    const task = this.leased(taskId, leaseToken);
    if (!task) return false;
    task.record.error = { ...error, args: { ...error.args } };
    this.finish(task, 'CANCELED');
    return true;
  }

  async cancel(taskId: string): Promise<TaskStatus | null> {
    const task = this.tasks.get(taskId);
    if (!task) return null;
    const before = task.record.status;
    if (!isFinalStatus(before)) this.finish(task, 'CANCELED');
    return before;
  }

  async get(taskId: string): Promise<TaskRecord | null> {
    const task = this.tasks.get(taskId);
    return task ? copy(task.record) : null;
  }

  async getRequestBody(taskId: string): Promise<Buffer | null> {
    const task = this.tasks.get(taskId);
    return task ? this.readBody(task) : null;
  }

  async getResult(taskId: string): Promise<StoredResult> {
    const task = this.tasks.get(taskId);
    if (!task) return { kind: 'missing' };
    const { record } = task;
    if (!isFinalStatus(record.status)) return { kind: 'pending' };
    if (record.error) return { kind: 'error', ...record.error, args: { ...record.error.args } };
    if (!record.result || !task.resultBody) return { kind: 'missing' };
    const read = await loadPayload(this.files, task.resultBody);
    if (read.kind !== 'ok') return read;
    return { kind: 'result', statusCode: record.result.statusCode, headers: { ...record.result.headers }, body: Buffer.from(read.data) };
  }

  async countQueued(accountId: number): Promise<number> {
    return this.countActive(accountId, 'QUEUED');
  }

  async countRunning(accountId: number): Promise<number> {
    return this.countActive(accountId, 'PROCESSING');
  }

  async storedBytes(accountId: number): Promise<number> {
    let bytes = 0;
    for (const { record, requestBody, resultBody } of this.tasks.values()) {
      if (record.callerId === accountId) bytes += requestBody.size + (resultBody?.size ?? 0);
    }
    return bytes;
  }

  async purgeExpired(now: number = this.now()): Promise<number> {
    const cutoff = now - this.retentionMs;
    const expired = [...this.tasks.values()].filter((t) => t.record.completedAt !== null && t.record.completedAt < cutoff);
    for (const task of expired) {
      this.tasks.delete(task.record.taskId);
      await deletePayload(this.files, task.requestBody);
      await deletePayload(this.files, task.resultBody);
    }
    return expired.length;
  }

  async ping(): Promise<void> {
    // Always reachable: it lives in this process.
  }

  async close(): Promise<void> {
    this.tasks.clear();
    this.active.clear();
    await this.files.destroy();
  }

  private checkQueuedCap(callerId: number, limits: CreateLimits): void {
    if (this.countActive(callerId, 'QUEUED') >= limits.maxQueuedPerAccount) {
      throw gatewayError('TOO_MANY_IDLE_ASYNC_TASKS', { args: { account: callerId, limit: limits.maxQueuedPerAccount } });
    }
  }

  private countActive(accountId: number, status: TaskStatus): number {
    let n = 0;
    for (const { record } of this.active.values()) if (record.callerId === accountId && record.status === status) n++;
    return n;
  }

  private async readBody(task: MemoryTask): Promise<Buffer | null> {
    const read = await loadPayload(this.files, task.requestBody);
    return read.kind === 'ok' ? Buffer.from(read.data) : null;
  }

  /** The task when it is PROCESSING under this lease token. */
  private leased(taskId: string, leaseToken: string): MemoryTask | undefined {
    const task = this.active.get(taskId);
    return task && task.record.status === 'PROCESSING' && task.record.leaseToken === leaseToken ? task : undefined;
  }

  private finish(task: MemoryTask, status: 'COMPLETED' | 'CANCELED'): void {
    Object.assign(task.record, { status, completedAt: this.now(), leaseToken: null, leaseUntil: null } satisfies Partial<TaskRecord>);
    this.active.delete(task.record.taskId);
  }
}

function copy(record: TaskRecord): TaskRecord {
  return {
    ...record,
    request: { ...record.request },
    result: record.result ? { ...record.result, headers: { ...record.result.headers } } : null,
    error: record.error ? { ...record.error, args: { ...record.error.args } } : null,
  };
}
