/**
 * The async task store, written once on the store port (embedded, MongoDB or memory). Each transition
 * is one compare-and-set of the task document (`findOneAndUpdate` / `updateMany` whose filter holds the
 * expected status and lease token), so any number of gateway processes can share one store: a claim
 * hands a task to one worker only, and a worker that lost its lease writes nothing. No transactions.
 *
 * Caps are carried by two sparse unique indexes rather than counters: a QUEUED task holds a
 * `queueSlot` "<callerId>:<n>" with n < maxQueuedPerAccount, a PROCESSING task a `runSlot`
 * "<callerId>:<n>" with n < maxRunningPerAccount, and each slot is removed ($unset) in the same
 * update that moves the task out of that status. The store itself then refuses a (cap+1)-th task
 * (duplicate key), across any number of processes. A counter document would need a second write per
 * transition, and a process dying between the two writes would leave the counter wrong for good; a
 * slot lives and dies with its task. Large bodies: the store's blobs (`taskFiles`).
 */
import { randomInt, randomUUID } from 'node:crypto';
import { gatewayError } from '../errors.js';
import { isDuplicateKey, type Collection, type CollectionSpec, type DocStore, type Filter } from '../storage/port.js';
import { deletePayload, loadPayload, storePayload, type BlobStore, type StoredPayload } from './payload-storage.js';
import {
  DAY_MS,
  REQUEST_INLINE_MAX_BYTES,
  RESULT_INLINE_MAX_BYTES,
  runningCapFor,
  type ClaimedTask,
  type ClaimOptions,
  type CreateLimits,
  type TaskLease,
  type CreateTaskInput,
  type StoredResult,
  type TaskCursor,
  type TaskError,
  type TaskRecord,
  type TaskRequestKind,
  type TaskResult,
  type TaskStatus,
  type TaskStore,
  type TaskStoreOptions,
} from './task-store.js';

export const TASKS_COLLECTION = 'tasks';
export const TASK_FILES_BUCKET = 'taskFiles';

/** Header names may hold dots, which MongoDB field names should not: kept as pairs. */
export interface PairDoc {
  name: string;
  value: string;
}

export interface TaskDoc {
  _id: string;
  callerId: number;
  serviceId: number;
  serviceAccountId: number;
  status: TaskStatus;
  createdAt: number;
  completedAt: number | null;
  request: {
    kind: TaskRequestKind;
    configId?: number;
    dataType?: string;
    config?: string;
    contentType?: string;
    keyName?: string;
    body: StoredPayload;
  };
  leaseToken: string | null;
  leaseUntil: number | null;
  workerId: string | null;
  attempt: number;
  queueSlot?: string;
  runSlot?: string;
  result: { statusCode: number; headers: PairDoc[]; body: StoredPayload } | null;
  error: { status: number; code: string; message: string; args: PairDoc[] } | null;
}

export const TASKS: CollectionSpec = {
  name: TASKS_COLLECTION,
  indexes: [
    { name: 'queueSlot_unique', fields: ['queueSlot'], unique: true },
    { name: 'runSlot_unique', fields: ['runSlot'], unique: true },
    { name: 'claim_order', fields: ['status', 'createdAt'] },
    { name: 'caller_status', fields: ['callerId', 'status'] },
    { name: 'caller_created', fields: ['callerId', 'createdAt'] },
    { name: 'completedAt', fields: ['completedAt'] },
  ],
};

export interface DocTaskStoreOptions extends TaskStoreOptions {
  docs: DocStore;
}

/** The orphan-file sweep acts this long after the reaper would have. */
const GRACE_MS = DAY_MS;
/** Bounds the retries of one claim or create under contention. */
const MAX_ROUNDS = 50;
const PURGE_BATCH = 200;

export class DocTaskStore implements TaskStore {
  readonly files: BlobStore;
  private readonly retentionMs: number;
  private readonly now: () => number;

  private constructor(
    private readonly docs: DocStore,
    private readonly tasks: Collection<TaskDoc>,
    options: TaskStoreOptions,
  ) {
    this.retentionMs = options.retentionMs;
    this.now = options.now ?? Date.now;
    this.files = docs.blobs(TASK_FILES_BUCKET);
  }

  /** The store on `docs`; declares the collection and the indexes the caps rely on. */
  static async open(options: DocTaskStoreOptions): Promise<DocTaskStore> {
    return new DocTaskStore(options.docs, await options.docs.collection<TaskDoc>(TASKS), options);
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
    const doc: TaskDoc = {
      _id: taskId,
      callerId,
      serviceId: input.serviceId,
      serviceAccountId: input.serviceAccountId,
      status: 'QUEUED',
      createdAt: this.now(),
      completedAt: null,
      request: { ...requestInfo, body: stored },
      leaseToken: null,
      leaseUntil: null,
      workerId: null,
      attempt: 0,
      result: null,
      error: null,
    };
    for (let round = 0; round < MAX_ROUNDS && taken.size < cap; round++) {
      try {
        await this.tasks.insert({ ...doc, queueSlot: `${callerId}:${freeSlot(taken, cap)}` });
        return recordOf(doc);
      } catch (err) {
        if (!isDuplicateKey(err)) {
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
    const services: Filter = options.serviceIds ? { serviceId: { $in: [...options.serviceIds] } } : {};
    const full: number[] = [];
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const candidate = await this.tasks.findOne(
        {
          $or: [
            { status: 'QUEUED', callerId: { $nin: full }, ...services },
            { status: 'PROCESSING', leaseUntil: { $lt: now }, ...services },
          ],
        },
        { sort: { createdAt: 1 } },
      );
      if (!candidate) return null;
      const lease = { leaseToken: randomUUID(), leaseUntil: now + options.leaseMs, workerId: options.workerId };
      if (candidate.status === 'PROCESSING') {
        // A crashed worker's task: it keeps its runSlot, so it may be re-claimed even at the cap.
        const claimed = await this.tasks.findOneAndUpdate(
          { _id: candidate._id, status: 'PROCESSING', leaseToken: candidate.leaseToken, leaseUntil: { $lt: now } },
          { $set: lease, $inc: { attempt: 1 } },
        );
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
    const filter = leasesFilter(leases);
    const matched = await this.tasks.updateMany(filter, { $set: { leaseUntil: this.now() + leaseMs } });
    if (matched === leases.length) return new Set(leases.map((l) => l.taskId));
    const held = await this.tasks.find(filter);
    return new Set(held.map((d) => d._id));
  }

  async releaseLeases(leases: readonly TaskLease[]): Promise<void> {
    if (leases.length === 0) return;
    // Claims take a PROCESSING task whose lease is before now: one that ended a moment ago qualifies.
    await this.tasks.updateMany(leasesFilter(leases), { $set: { leaseUntil: this.now() - 1 } });
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
    return (await this.tasks.get(taskId))?.status ?? null;
  }

  async get(taskId: string): Promise<TaskRecord | null> {
    const doc = await this.tasks.get(taskId);
    return doc ? recordOf(doc) : null;
  }

  async listOf(callerId: number, options: { limit: number; after?: TaskCursor }): Promise<TaskRecord[]> {
    const { after } = options;
    const filter: Filter = after
      ? { callerId, $or: [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, _id: { $lt: after.taskId } }] }
      : { callerId };
    const docs = await this.tasks.find(filter, { sort: { createdAt: -1, _id: -1 }, limit: options.limit });
    return docs.map(recordOf);
  }

  async getRequestBody(taskId: string): Promise<Buffer | null> {
    const doc = await this.tasks.get(taskId);
    if (!doc?.request?.body) return null;
    const read = await loadPayload(this.files, doc.request.body);
    return read.kind === 'ok' ? read.data : null;
  }

  async getResult(taskId: string): Promise<StoredResult> {
    const doc = await this.tasks.get(taskId);
    if (!doc) return { kind: 'missing' };
    if (doc.status === 'QUEUED' || doc.status === 'PROCESSING') return { kind: 'pending' };
    if (doc.error)
      return { kind: 'error', status: doc.error.status, code: doc.error.code, message: doc.error.message, args: fromPairs(doc.error.args) };
    if (!doc.result?.body) return { kind: 'missing' };
    const read = await loadPayload(this.files, doc.result.body);
    if (read.kind !== 'ok') return read;
    return { kind: 'result', statusCode: doc.result.statusCode, headers: fromPairs(doc.result.headers), body: read.data };
  }

  countQueued(accountId: number): Promise<number> {
    return this.tasks.count({ callerId: accountId, status: 'QUEUED' });
  }

  countRunning(accountId: number): Promise<number> {
    return this.tasks.count({ callerId: accountId, status: 'PROCESSING' });
  }

  async storedBytes(accountId: number): Promise<number> {
    const [request = 0, result = 0] = await this.tasks.sum({ callerId: accountId }, ['request.body.size', 'result.body.size']);
    return request + result;
  }

  /** Files first, then the task: a crash in between leaves a task whose result reads as missing. */
  async purgeExpired(now: number = this.now()): Promise<number> {
    const cutoff = now - this.retentionMs;
    let removed = 0;
    for (;;) {
      const batch = await this.tasks.find({ completedAt: { $lt: cutoff } }, { limit: PURGE_BATCH });
      // The tasks go before their files: the other way round, a caller between the two saw a COMPLETED
      // task whose response was ENTITY_NOT_FOUND_BY_ID (a full CI run of the MongoDB suite caught it).
      // Files of a process that dies in between are the orphan sweep's below.
      if (batch.length > 0) removed += await this.tasks.deleteMany({ _id: { $in: batch.map((d) => d._id) }, completedAt: { $lt: cutoff } });
      for (const doc of batch) {
        if (doc.request?.body) await deletePayload(this.files, doc.request.body);
        if (doc.result?.body) await deletePayload(this.files, doc.result.body);
      }
      if (batch.length < PURGE_BATCH) break;
    }
    await this.sweepOrphanFiles(cutoff - GRACE_MS);
    return removed;
  }

  ping(): Promise<void> {
    return this.docs.ping();
  }

  /** The store port is the storage's to close. */
  async close(): Promise<void> {}

  /**
   * QUEUED → PROCESSING in a free runSlot of the caller: 'full' when the caller is at its running cap,
   * 'gone' when another worker took or canceled the task first.
   */
  private async claimQueued(
    taskId: string,
    callerId: number,
    cap: number,
    lease: Pick<TaskDoc, 'leaseToken' | 'leaseUntil' | 'workerId'>,
  ): Promise<ClaimedTask | 'full' | 'gone'> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const taken = await this.takenSlots('runSlot', callerId);
      if (taken.size >= cap) return 'full';
      try {
        const claimed = await this.tasks.findOneAndUpdate(
          { _id: taskId, status: 'QUEUED' },
          {
            $set: { ...lease, status: 'PROCESSING', runSlot: `${callerId}:${freeSlot(taken, cap)}` },
            $unset: ['queueSlot'],
            $inc: { attempt: 1 },
          },
        );
        return claimed ? await this.claimedOf(claimed) : 'gone';
      } catch (err) {
        if (!isDuplicateKey(err)) throw err; // else another process took that slot: look again
      }
    }
    return 'full';
  }

  /** The claimed document as a record with its request body (inline, or read from the blobs). */
  private async claimedOf(doc: TaskDoc): Promise<ClaimedTask> {
    const read = doc.request?.body ? await loadPayload(this.files, doc.request.body) : undefined;
    return { ...recordOf(doc), requestBody: read?.kind === 'ok' ? read.data : null };
  }

  /** Ends a task matching `filter`; returns the document as it was before, or null. */
  private finish(
    filter: Filter,
    status: 'COMPLETED' | 'CANCELED',
    outcome: Partial<Pick<TaskDoc, 'result' | 'error'>>,
  ): Promise<TaskDoc | null> {
    return this.tasks.findOneAndUpdate(
      filter,
      { $set: { ...outcome, status, completedAt: this.now(), leaseToken: null, leaseUntil: null }, $unset: ['queueSlot', 'runSlot'] },
      { returnDocument: 'before' },
    );
  }

  private async takenSlots(field: 'queueSlot' | 'runSlot', callerId: number): Promise<Set<number>> {
    // A slot exists exactly while the task has that status; the status keeps the query on an index.
    const status = field === 'queueSlot' ? 'QUEUED' : 'PROCESSING';
    const docs = await this.tasks.find({ callerId, status, [field]: { $exists: true } });
    const taken = new Set<number>();
    for (const doc of docs) {
      const slot = Number(doc[field]?.split(':')[1]);
      if (Number.isInteger(slot)) taken.add(slot);
    }
    return taken;
  }

  /** Files left by a process that died between upload and insert, or missed by the reaper. */
  private async sweepOrphanFiles(before: number): Promise<void> {
    const files = await this.files.listBefore(before, PURGE_BATCH);
    const taskIds = [...new Set(files.flatMap((f) => (f.metadata.taskId ? [f.metadata.taskId] : [])))];
    const live = new Set((await this.tasks.find({ _id: { $in: taskIds } })).map((d) => d._id));
    for (const file of files) if (file.metadata.taskId && !live.has(file.metadata.taskId)) await this.files.delete(file.ref);
  }
}

const leasesFilter = (leases: readonly TaskLease[]): Filter => ({
  status: 'PROCESSING',
  $or: leases.map(({ taskId, leaseToken }) => ({ _id: taskId, leaseToken })),
});

/** A random free slot below the cap (random, so concurrent claimers rarely pick the same one). */
function freeSlot(taken: Set<number>, cap: number): number {
  const free: number[] = [];
  for (let i = 0; i < cap; i++) if (!taken.has(i)) free.push(i);
  return free[randomInt(free.length)] ?? 0;
}

export const toPairs = (record: Record<string, string>): PairDoc[] => Object.entries(record).map(([name, value]) => ({ name, value }));

export function fromPairs(pairs: readonly PairDoc[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of pairs ?? []) out[name] = value;
  return out;
}

function recordOf(doc: TaskDoc): TaskRecord {
  const { kind, configId, dataType, config, contentType, keyName, body } = doc.request;
  return {
    taskId: doc._id,
    callerId: doc.callerId,
    serviceId: doc.serviceId,
    serviceAccountId: doc.serviceAccountId,
    status: doc.status,
    createdAt: doc.createdAt,
    completedAt: doc.completedAt ?? null,
    request: {
      kind,
      ...(configId != null ? { configId } : {}),
      ...(dataType != null ? { dataType } : {}),
      ...(config != null ? { config } : {}),
      ...(contentType != null ? { contentType } : {}),
      ...(keyName != null ? { keyName } : {}),
      bodyBytes: body.size,
    },
    leaseToken: doc.leaseToken ?? null,
    leaseUntil: doc.leaseUntil ?? null,
    workerId: doc.workerId ?? null,
    attempt: doc.attempt ?? 0,
    result: doc.result
      ? { statusCode: doc.result.statusCode, headers: fromPairs(doc.result.headers), bodyBytes: doc.result.body.size }
      : null,
    error: doc.error
      ? { status: doc.error.status, code: doc.error.code, message: doc.error.message, args: fromPairs(doc.error.args) }
      : null,
  };
}
