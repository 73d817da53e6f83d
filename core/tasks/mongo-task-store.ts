/**
 * The MongoDB task store (mongoose). Each transition is one conditional atomic update of the task
 * document (`findOneAndUpdate` / `updateOne` whose filter holds the expected status and lease token),
 * so any number of gateway processes can share one database: a claim hands a task to one worker
 * only, and a worker that lost its lease writes nothing. No transactions (the test server has none).
 * Caps: sparse unique slot indexes, see mongo-task-model.ts. Large bodies: GridFS.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import { gatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { GridFsBlobStore } from './gridfs-blob-store.js';
import { isDuplicateKeyError } from './mongo-connection.js';
import {
  TASK_FILES_BUCKET, ensureTaskIndexes, fromPairs, taskModel, toBuffer, toPairs,
  type PayloadDoc, type TaskDoc, type TaskModel,
} from './mongo-task-model.js';
import { deletePayload, loadPayload, storePayload, type StoredPayload } from './payload-storage.js';
import {
  DAY_MS, REQUEST_INLINE_MAX_BYTES, RESULT_INLINE_MAX_BYTES, runningCapFor,
  type ClaimedTask, type ClaimOptions, type CreateLimits, type TaskLease, type CreateTaskInput, type StoredResult, type TaskError,
  type TaskRecord, type TaskResult, type TaskStatus, type TaskStore, type TaskStoreOptions,
} from './task-store.js';

export interface MongoTaskStoreOptions extends TaskStoreOptions {
  connection: Connection;
  /** Close the connection with the store (true when the store opened it). */
  ownsConnection?: boolean;
  logger?: Logger;
}

/** The TTL backstop and the orphan-file sweep act this long after the reaper would have. */
const GRACE_MS = DAY_MS;
/** Bounds the retries of one claim or create under contention. */
const MAX_ROUNDS = 50;
const PURGE_BATCH = 200;

export class MongoTaskStore implements TaskStore {
  readonly model: TaskModel;
  readonly files: GridFsBlobStore;
  private readonly connection: Connection;
  private readonly ownsConnection: boolean;
  private readonly retentionMs: number;
  private readonly now: () => number;

  private constructor(options: MongoTaskStoreOptions) {
    this.connection = options.connection;
    this.ownsConnection = options.ownsConnection ?? false;
    this.retentionMs = options.retentionMs;
    this.now = options.now ?? Date.now;
    this.model = taskModel(options.connection);
    this.files = new GridFsBlobStore(options.connection, TASK_FILES_BUCKET);
  }

  /** A store on an open connection; creates the indexes the caps rely on. */
  static async open(options: MongoTaskStoreOptions): Promise<MongoTaskStore> {
    const store = new MongoTaskStore(options);
    await ensureTaskIndexes(store.model, options.logger);
    return store;
  }

  async create(input: CreateTaskInput, limits: CreateLimits): Promise<TaskRecord> {
    const cap = limits.maxQueuedPerAccount;
    const { callerId } = input;
    const tooMany = () => gatewayError('TOO_MANY_IDLE_ASYNC_TASKS', { args: { account: callerId, limit: cap } });
    let taken = await this.takenSlots('queueSlot', callerId);
    if (taken.size >= cap) throw tooMany();
    const taskId = randomUUID();
    const { body, ...requestInfo } = input.request;
    const stored = await storePayload(this.files, `${taskId}.request`, body, REQUEST_INLINE_MAX_BYTES, { taskId, part: 'request' });
    const doc: Omit<TaskDoc, 'queueSlot'> = {
      _id: taskId, callerId, serviceId: input.serviceId, serviceAccountId: input.serviceAccountId,
      status: 'QUEUED', createdAt: this.now(), completedAt: null, expireAt: null,
      request: { ...requestInfo, body: stored }, leaseToken: null, leaseUntil: null, workerId: null, attempt: 0,
      result: null, error: null,
    };
    for (let round = 0; round < MAX_ROUNDS && taken.size < cap; round++) {
      try {
        await this.model.create({ ...doc, queueSlot: `${callerId}:${freeSlot(taken, cap)}` });
        return recordOf({ ...doc });
      } catch (err) {
        if (!isDuplicateKeyError(err)) {
          await deletePayload(this.files, stored);
          throw err;
        }
        taken = await this.takenSlots('queueSlot', callerId); // another process took that slot
      }
    }
    await deletePayload(this.files, stored);
    throw tooMany();
  }

  async claim(options: ClaimOptions): Promise<ClaimedTask | null> {
    if (options.serviceIds?.length === 0) return null;
    const now = this.now();
    const services = options.serviceIds ? { serviceId: { $in: [...options.serviceIds] } } : {};
    const full: number[] = [];
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const candidate = await this.model
        .findOne({ $or: [{ status: 'QUEUED', callerId: { $nin: full }, ...services }, { status: 'PROCESSING', leaseUntil: { $lt: now }, ...services }] })
        .sort({ createdAt: 1, _id: 1 })
        .select({ _id: 1, callerId: 1, status: 1, leaseToken: 1 })
        .lean<Pick<TaskDoc, '_id' | 'callerId' | 'status' | 'leaseToken'>>();
      if (!candidate) return null;
      const lease = { leaseToken: randomUUID(), leaseUntil: now + options.leaseMs, workerId: options.workerId };
      if (candidate.status === 'PROCESSING') {
        // A crashed worker's task: it keeps its runSlot, so it may be re-claimed even at the cap.
        const claimed = await this.model
          .findOneAndUpdate(
            { _id: candidate._id, status: 'PROCESSING', leaseToken: candidate.leaseToken, leaseUntil: { $lt: now } },
            { $set: lease, $inc: { attempt: 1 } },
            { new: true },
          )
          .lean<TaskDoc>();
        if (claimed) return this.claimedOf(claimed);
        continue;
      }
      const outcome = await this.claimQueued(candidate._id, candidate.callerId, runningCapFor(options, candidate.callerId), lease);
      if (outcome === 'full') full.push(candidate.callerId);
      else if (outcome !== 'gone') return outcome;
    }
    return null;
  }

  /** One write for all; only when some lease was refused, one read tells which. */
  async renewLeases(leases: readonly TaskLease[], leaseMs: number): Promise<Set<string>> {
    if (leases.length === 0) return new Set();
    const filter = { status: 'PROCESSING', $or: leases.map(({ taskId, leaseToken }) => ({ _id: taskId, leaseToken })) };
    const res = await this.model.updateMany(filter, { $set: { leaseUntil: this.now() + leaseMs } });
    if (res.matchedCount === leases.length) return new Set(leases.map((l) => l.taskId));
    const held = await this.model.find(filter).select({ _id: 1 }).lean<Array<{ _id: string }>>();
    return new Set(held.map((d) => d._id));
  }

  async releaseLeases(leases: readonly TaskLease[]): Promise<void> {
    if (leases.length === 0) return;
    const filter = { status: 'PROCESSING', $or: leases.map(({ taskId, leaseToken }) => ({ _id: taskId, leaseToken })) };
    // Claims take a PROCESSING task whose lease is before now: one that ended a moment ago qualifies.
    await this.model.updateMany(filter, { $set: { leaseUntil: this.now() - 1 } });
  }

  async complete(taskId: string, leaseToken: string, result: TaskResult): Promise<boolean> {
    const body = await storePayload(this.files, `${taskId}.result`, result.body, RESULT_INLINE_MAX_BYTES, { taskId, part: 'result' });
    const done = await this.finish({ _id: taskId, status: 'PROCESSING', leaseToken }, 'COMPLETED', {
      result: { statusCode: result.statusCode, headers: toPairs(result.headers), body },
    });
    if (!done) await deletePayload(this.files, body);
    return done !== null;
  }

  async fail(taskId: string, leaseToken: string, error: TaskError): Promise<boolean> {
    const done = await this.finish({ _id: taskId, status: 'PROCESSING', leaseToken }, 'CANCELED', {
      error: { status: error.status, code: error.code, message: error.message, args: toPairs(error.args) },
    });
    return done !== null;
  }

  async cancel(taskId: string): Promise<TaskStatus | null> {
    const before = await this.finish({ _id: taskId, status: { $in: ['QUEUED', 'PROCESSING'] } }, 'CANCELED', {});
    if (before) return before.status;
    const current = await this.model.findById(taskId).select({ status: 1 }).lean<Pick<TaskDoc, 'status'>>();
    return current?.status ?? null;
  }

  async get(taskId: string): Promise<TaskRecord | null> {
    const doc = await this.model.findById(taskId).lean<TaskDoc>();
    return doc ? recordOf(doc) : null;
  }

  async getRequestBody(taskId: string): Promise<Buffer | null> {
    const doc = await this.model.findById(taskId).select({ 'request.body': 1 }).lean<Pick<TaskDoc, 'request'>>();
    if (!doc?.request?.body) return null;
    const read = await loadPayload(this.files, payloadOf(doc.request.body));
    return read.kind === 'ok' ? read.data : null;
  }

  async getResult(taskId: string): Promise<StoredResult> {
    const doc = await this.model.findById(taskId).select({ status: 1, result: 1, error: 1 }).lean<Pick<TaskDoc, 'status' | 'result' | 'error'>>();
    if (!doc) return { kind: 'missing' };
    if (doc.status === 'QUEUED' || doc.status === 'PROCESSING') return { kind: 'pending' };
    if (doc.error) return { kind: 'error', status: doc.error.status, code: doc.error.code, message: doc.error.message, args: fromPairs(doc.error.args) };
    if (!doc.result?.body) return { kind: 'missing' };
    const read = await loadPayload(this.files, payloadOf(doc.result.body));
    if (read.kind !== 'ok') return read;
    return { kind: 'result', statusCode: doc.result.statusCode, headers: fromPairs(doc.result.headers), body: read.data };
  }

  countQueued(accountId: number): Promise<number> {
    return this.model.countDocuments({ callerId: accountId, status: 'QUEUED' }).exec();
  }

  countRunning(accountId: number): Promise<number> {
    return this.model.countDocuments({ callerId: accountId, status: 'PROCESSING' }).exec();
  }

  async storedBytes(accountId: number): Promise<number> {
    const [sum] = await this.model.aggregate<{ request: number; result: number }>([
      { $match: { callerId: accountId } },
      { $group: { _id: null, request: { $sum: '$request.body.size' }, result: { $sum: '$result.body.size' } } },
    ]);
    return (sum?.request ?? 0) + (sum?.result ?? 0);
  }

  /** Files first, then the task: a crash in between leaves a task whose result reads as missing. */
  async purgeExpired(now: number = this.now()): Promise<number> {
    const cutoff = now - this.retentionMs;
    let removed = 0;
    for (;;) {
      const batch = await this.model
        .find({ completedAt: { $lt: cutoff } })
        .select({ _id: 1, 'request.body': 1, 'result.body': 1 })
        .limit(PURGE_BATCH)
        .lean<Array<Pick<TaskDoc, '_id' | 'request' | 'result'>>>();
      for (const doc of batch) {
        if (doc.request?.body) await deletePayload(this.files, payloadOf(doc.request.body));
        if (doc.result?.body) await deletePayload(this.files, payloadOf(doc.result.body));
      }
      if (batch.length > 0) {
        const res = await this.model.deleteMany({ _id: { $in: batch.map((d) => d._id) }, completedAt: { $lt: cutoff } });
        removed += res.deletedCount;
      }
      if (batch.length < PURGE_BATCH) break;
    }
    await this.sweepOrphanFiles(new Date(cutoff - GRACE_MS));
    return removed;
  }

  async ping(): Promise<void> {
    const db = this.connection.db;
    if (!db || this.connection.readyState !== 1) throw new Error('not connected to MongoDB');
    await db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.connection.close();
  }

  /**
   * QUEUED → PROCESSING in a free runSlot of the caller: 'full' when the caller is at its running cap,
   * 'gone' when another worker took or canceled the task first.
   */
  private async claimQueued(taskId: string, callerId: number, cap: number, lease: Pick<TaskDoc, 'leaseToken' | 'leaseUntil' | 'workerId'>): Promise<ClaimedTask | 'full' | 'gone'> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const taken = await this.takenSlots('runSlot', callerId);
      if (taken.size >= cap) return 'full';
      try {
        const claimed = await this.model
          .findOneAndUpdate(
            { _id: taskId, status: 'QUEUED' },
            { $set: { ...lease, status: 'PROCESSING', runSlot: `${callerId}:${freeSlot(taken, cap)}` }, $unset: { queueSlot: 1 }, $inc: { attempt: 1 } },
            { new: true },
          )
          .lean<TaskDoc>();
        return claimed ? await this.claimedOf(claimed) : 'gone';
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err; // else another process took that slot: look again
      }
    }
    return 'full';
  }

  /** The claimed document as a record with its request body (inline, or read from GridFS). */
  private async claimedOf(doc: TaskDoc): Promise<ClaimedTask> {
    const read = doc.request?.body ? await loadPayload(this.files, payloadOf(doc.request.body)) : undefined;
    return { ...recordOf(doc), requestBody: read?.kind === 'ok' ? read.data : null };
  }

  /** Ends a task matching `filter`; returns the document as it was before, or null. */
  private finish(filter: Record<string, unknown>, status: 'COMPLETED' | 'CANCELED', outcome: Partial<Pick<TaskDoc, 'result' | 'error'>>): Promise<TaskDoc | null> {
    const completedAt = this.now();
    return this.model
      .findOneAndUpdate(
        filter,
        {
          $set: { ...outcome, status, completedAt, expireAt: new Date(completedAt + this.retentionMs + GRACE_MS), leaseToken: null, leaseUntil: null },
          $unset: { queueSlot: 1, runSlot: 1 },
        },
        { new: false },
      )
      .lean<TaskDoc>()
      .exec();
  }

  private async takenSlots(field: 'queueSlot' | 'runSlot', callerId: number): Promise<Set<number>> {
    // A slot exists exactly while the task has that status; the status keeps the query on an index.
    const status = field === 'queueSlot' ? 'QUEUED' : 'PROCESSING';
    const docs = await this.model.find({ callerId, status, [field]: { $exists: true } }).select({ [field]: 1 }).lean<Array<Partial<TaskDoc>>>();
    const taken = new Set<number>();
    for (const doc of docs) {
      const slot = Number(doc[field]?.split(':')[1]);
      if (Number.isInteger(slot)) taken.add(slot);
    }
    return taken;
  }

  /** GridFS files left by a process that died between upload and insert, or missed by the reaper. */
  private async sweepOrphanFiles(before: Date): Promise<void> {
    const files = await this.files.filesUploadedBefore(before, PURGE_BATCH);
    const taskIds = [...new Set(files.flatMap((f) => (f.taskId ? [f.taskId] : [])))];
    const live = new Set((await this.model.find({ _id: { $in: taskIds } }).select({ _id: 1 }).lean<Array<{ _id: string }>>()).map((d) => d._id));
    for (const file of files) if (file.taskId && !live.has(file.taskId)) await this.files.delete(file.ref);
  }
}

/** A random free slot below the cap (random, so concurrent claimers rarely pick the same one). */
function freeSlot(taken: Set<number>, cap: number): number {
  const free: number[] = [];
  for (let i = 0; i < cap; i++) if (!taken.has(i)) free.push(i);
  return free[randomInt(free.length)] ?? 0;
}

function payloadOf(doc: PayloadDoc): StoredPayload {
  const inline = toBuffer(doc.inline);
  return { size: doc.size, sha256: doc.sha256, ...(inline ? { inline } : {}), ...(doc.ref ? { ref: doc.ref } : {}) };
}

function recordOf(doc: Omit<TaskDoc, 'queueSlot' | 'runSlot'>): TaskRecord {
  const { kind, configId, dataType, config, contentType, keyName, body } = doc.request;
  return {
    taskId: doc._id, callerId: doc.callerId, serviceId: doc.serviceId, serviceAccountId: doc.serviceAccountId,
    status: doc.status, createdAt: doc.createdAt, completedAt: doc.completedAt ?? null,
    request: {
      kind, ...(configId != null ? { configId } : {}), ...(dataType != null ? { dataType } : {}), ...(config != null ? { config } : {}),
      ...(contentType != null ? { contentType } : {}), ...(keyName != null ? { keyName } : {}), bodyBytes: body.size,
    },
    leaseToken: doc.leaseToken ?? null, leaseUntil: doc.leaseUntil ?? null, workerId: doc.workerId ?? null, attempt: doc.attempt ?? 0,
    result: doc.result ? { statusCode: doc.result.statusCode, headers: fromPairs(doc.result.headers), bodyBytes: doc.result.body.size } : null,
    error: doc.error ? { status: doc.error.status, code: doc.error.code, message: doc.error.message, args: fromPairs(doc.error.args) } : null,
  };
}
