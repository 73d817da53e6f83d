/**
 * The MongoDB fitting store (mongoose), for gateways that share one database and must keep fitting
 * state across restarts. Each job transition is one conditional update whose filter holds the
 * expected status and runner, so a canceled or expired job ignores its old runner's writes. No
 * transactions (the MongoDB-wire test server has none): a job's SUCCESS and the switch of its derived
 * service are two writes, and `applied` marks the second done so a crash between them is repaired.
 */
import type { Connection } from 'mongoose';
import {
  GridFsBlobStore,
  deletePayload,
  gatewayError,
  isDuplicateKeyError,
  loadPayload,
  storePayload,
  type StoredPayload,
} from '../../../core/plugins/index.js';
import {
  DATASET_FILES_BUCKET,
  ensureFittingIndexes,
  fittingModels,
  toBuffer,
  type DatasetDoc,
  type DerivedDoc,
  type FittingModels,
  type JobDoc,
  type PayloadDoc,
} from './mongo-fitting-models.js';
import {
  activeJobConflict,
  nameTaken,
  type DatasetContent,
  type DatasetRecord,
  type DeleteOutcome,
  type DerivedServiceRecord,
  type FittingStore,
  type FittingStoreOptions,
  type JobError,
  type JobRecord,
  type JobStatus,
  type NewDataset,
  type NewDerivedService,
  type NewJob,
  type Sequence,
  SEQUENCES,
} from './fitting-store.js';

/** Dataset contents up to this size stay in the document; larger ones go to GridFS. */
const INLINE_MAX_BYTES = 1024 * 1024;
const ACTIVE: JobStatus[] = ['PENDING', 'RUNNING'];

export interface MongoFittingStoreOptions extends FittingStoreOptions {
  connection: Connection;
  /** Close the connection with the store (true when the store's owner opened it for the store). */
  ownsConnection?: boolean;
  /** Told about optional indexes that could not be created. */
  warn?: (message: string, err: unknown) => void;
}


export class MongoFittingStore implements FittingStore {
  readonly models: FittingModels;
  readonly files: GridFsBlobStore;
  readonly #connection: Connection;
  readonly #ownsConnection: boolean;
  readonly #now: () => number;

  private constructor(options: MongoFittingStoreOptions) {
    this.#connection = options.connection;
    this.#ownsConnection = options.ownsConnection ?? false;
    this.#now = options.now ?? Date.now;
    this.models = fittingModels(options.connection);
    this.files = new GridFsBlobStore(options.connection, DATASET_FILES_BUCKET);
  }

  static async open(options: MongoFittingStoreOptions): Promise<MongoFittingStore> {
    const store = new MongoFittingStore(options);
    await ensureFittingIndexes(store.models, (index, err) => options.warn?.(`fitting index ${index} not created; continuing without it`, err));
    await Promise.all(SEQUENCES.map((sequence) => store.#ensureCounter(sequence)));
    return store;
  }

  /**
   * Creates a sequence's counter document if it is missing. Incrementing with `upsert` instead is a
   * race: two gateways opening one fresh database could both insert it and hand out the same IDs (seen
   * on mongo-java-server). Here a second insert just fails on the unique _id, which is fine.
   */
  async #ensureCounter(sequence: Sequence): Promise<void> {
    try {
      await this.models.counters.create({ _id: sequence, seq: 0 });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  /**
   * The next ID of a sequence, by compare-and-set: read the counter, then move it on only if nobody
   * else did meanwhile (`modifiedCount` is decided inside the atomic update). A findOneAndUpdate with
   * `$inc` would be simpler, but mongo-java-server reads the returned document back outside its lock,
   * so two callers can be shown the same value.
   */
  async nextId(sequence: Sequence): Promise<number> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const current = await this.models.counters.findById(sequence).lean<{ seq: number }>();
      if (!current) {
        await this.#ensureCounter(sequence);
        continue;
      }
      const next = current.seq + 1;
      const { modifiedCount } = await this.models.counters.updateOne({ _id: sequence, seq: current.seq }, { $set: { seq: next } });
      if (modifiedCount === 1) return next;
    }
    throw new Error(`sequence ${sequence} could not be advanced: too much contention`);
  }


  async createDataset(input: NewDataset): Promise<DatasetRecord> {
    const { content, targets, ...rest } = input;
    const meta = { datasetId: String(input.id) };
    const storedContent = await storePayload(this.files, `dataset-${input.id}`, content, INLINE_MAX_BYTES, { ...meta, part: 'content' });
    let storedTargets: StoredPayload | null = null;
    try {
      if (targets) storedTargets = await storePayload(this.files, `dataset-${input.id}.targets`, targets, INLINE_MAX_BYTES, { ...meta, part: 'targets' });
      const doc: DatasetDoc = { _id: input.id, ...rest, content: storedContent, targets: storedTargets, createdAt: this.#now() };
      await this.models.datasets.create(doc);
      return datasetOf(doc);
    } catch (err) {
      await deletePayload(this.files, storedContent);
      await deletePayload(this.files, storedTargets);
      throw err;
    }
  }

  async getDataset(id: number): Promise<DatasetRecord | null> {
    const doc = await this.models.datasets.findById(id).lean<DatasetDoc>();
    return doc ? datasetOf(doc) : null;
  }

  async listDatasets(accountId: number): Promise<DatasetRecord[]> {
    const docs = await this.models.datasets.find({ accountId }).sort({ _id: 1 }).lean<DatasetDoc[]>();
    return docs.map(datasetOf);
  }

  async readDataset(id: number): Promise<DatasetContent | null> {
    const doc = await this.models.datasets.findById(id).select({ content: 1, targets: 1 }).lean<Pick<DatasetDoc, 'content' | 'targets'>>();
    if (!doc) return null;
    const content = await this.#load(id, doc.content);
    if (content === null) return null;
    const targets = doc.targets ? await this.#load(id, doc.targets) : null;
    return { content, targets };
  }

  async deleteDataset(id: number): Promise<boolean> {
    const doc = await this.models.datasets.findOneAndDelete({ _id: id }).lean<DatasetDoc>();
    if (!doc) return false;
    await deletePayload(this.files, payloadOf(doc.content));
    if (doc.targets) await deletePayload(this.files, payloadOf(doc.targets));
    return true;
  }

  async createDerived(input: NewDerivedService): Promise<DerivedServiceRecord> {
    const now = this.#now();
    const doc: DerivedDoc = { _id: input.id, ...withoutId(input), modelDir: null, fittedAt: null, fittedByJobId: null, createdAt: now, updatedAt: now };
    try {
      await this.models.derived.create(doc);
    } catch (err) {
      if (isDuplicateKeyError(err)) throw nameTaken(input.name);
      throw err;
    }
    return derivedOf(doc);
  }

  async getDerived(id: number): Promise<DerivedServiceRecord | null> {
    const doc = await this.models.derived.findById(id).lean<DerivedDoc>();
    return doc ? derivedOf(doc) : null;
  }

  async listDerived(accountId?: number): Promise<DerivedServiceRecord[]> {
    const docs = await this.models.derived.find(accountId === undefined ? {} : { accountId }).sort({ _id: 1 }).lean<DerivedDoc[]>();
    return docs.map(derivedOf);
  }

  async deleteDerived(id: number): Promise<DeleteOutcome> {
    if (await this.models.jobs.exists({ activeServiceId: id })) return 'busy';
    const result = await this.models.derived.deleteOne({ _id: id });
    return result.deletedCount === 1 ? 'deleted' : 'missing';
  }

  async createJob(input: NewJob): Promise<JobRecord> {
    const now = this.#now();
    const { jobId, leaseMs, ...rest } = input;
    const doc: JobDoc = {
      _id: jobId, ...rest, status: 'PENDING', percentage: 0, leaseUntil: now + leaseMs, error: null, applied: false,
      createdAt: now, startedAt: null, updatedAt: now, completedAt: null, activeServiceId: input.serviceId,
    };
    try {
      await this.models.jobs.create(doc);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      const active = await this.models.jobs.findOne({ activeServiceId: input.serviceId }).select({ _id: 1 }).lean<{ _id: number }>();
      throw active ? activeJobConflict(active._id) : gatewayError('CONFLICT', { args: { reason: `Job ${jobId} exists` } });
    }
    return jobOf(doc);
  }

  async getJob(jobId: number): Promise<JobRecord | null> {
    const doc = await this.models.jobs.findById(jobId).lean<JobDoc>();
    return doc ? jobOf(doc) : null;
  }

  async listJobs(accountId: number, limit: number): Promise<JobRecord[]> {
    const docs = await this.models.jobs.find({ accountId }).sort({ createdAt: -1, _id: -1 }).limit(limit).lean<JobDoc[]>();
    return docs.map(jobOf);
  }

  async startJob(jobId: number, runnerId: string, leaseMs: number): Promise<JobRecord | null> {
    const now = this.#now();
    const doc = await this.models.jobs
      .findOneAndUpdate({ _id: jobId, runnerId, status: 'PENDING' }, { $set: { status: 'RUNNING', startedAt: now, updatedAt: now, leaseUntil: now + leaseMs } }, { new: true })
      .lean<JobDoc>();
    return doc ? jobOf(doc) : null;
  }

  async reportProgress(jobId: number, runnerId: string, percentage: number, leaseMs: number): Promise<boolean> {
    const now = this.#now();
    const result = await this.models.jobs.updateOne(
      { _id: jobId, runnerId, status: 'RUNNING' },
      { $set: { percentage, updatedAt: now, leaseUntil: now + leaseMs } },
    );
    return result.matchedCount === 1;
  }

  /** One write for all; only when some lease was refused, one read tells which. */
  async renewLeases(jobIds: readonly number[], runnerId: string, leaseMs: number): Promise<Set<number>> {
    if (jobIds.length === 0) return new Set();
    const filter = { _id: { $in: [...jobIds] }, runnerId, status: { $in: ACTIVE } };
    const result = await this.models.jobs.updateMany(filter, { $set: { leaseUntil: this.#now() + leaseMs } });
    if (result.matchedCount === jobIds.length) return new Set(jobIds);
    const held = await this.models.jobs.find(filter).select({ _id: 1 }).lean<Array<{ _id: number }>>();
    return new Set(held.map((d) => d._id));
  }

  async completeJob(jobId: number, runnerId: string): Promise<JobRecord | null> {
    const now = this.#now();
    const doc = await this.models.jobs
      .findOneAndUpdate(
        { _id: jobId, runnerId, status: 'RUNNING' },
        { $set: { status: 'SUCCESS', percentage: 100, leaseUntil: null, updatedAt: now, completedAt: now, applied: false }, $unset: { activeServiceId: 1 } },
        { new: true },
      )
      .lean<JobDoc>();
    if (!doc) return null;
    await this.#apply(doc);
    return { ...jobOf(doc), applied: true };
  }

  async failJob(jobId: number, runnerId: string, error: JobError): Promise<JobRecord | null> {
    return this.#finish({ _id: jobId, runnerId, status: { $in: ACTIVE } }, 'FAILED', error);
  }

  async cancelJob(jobId: number): Promise<JobRecord | null> {
    return (await this.#finish({ _id: jobId, status: { $in: ACTIVE } }, 'CANCELED', null)) ?? this.getJob(jobId);
  }

  async expireJobs(now: number, error: JobError): Promise<JobRecord[]> {
    const filter = { status: { $in: ACTIVE }, leaseUntil: { $lt: now } };
    const candidates = await this.models.jobs.find(filter).select({ _id: 1 }).limit(1000).lean<Array<{ _id: number }>>();
    const expired: JobRecord[] = [];
    for (const { _id } of candidates) {
      const job = await this.#finish({ ...filter, _id }, 'FAILED', error);
      if (job) expired.push(job);
    }
    return expired;
  }

  async applyPendingResults(): Promise<DerivedServiceRecord[]> {
    const pending = await this.models.jobs.find({ status: 'SUCCESS', applied: false }).sort({ completedAt: 1 }).limit(1000).lean<JobDoc[]>();
    const switched: DerivedServiceRecord[] = [];
    for (const job of pending) {
      const service = await this.#apply(job);
      if (service) switched.push(service);
    }
    return switched;
  }

  async close(): Promise<void> {
    if (this.#ownsConnection) await this.#connection.close();
  }

  async #finish(filter: Record<string, unknown>, status: 'FAILED' | 'CANCELED', error: JobError | null): Promise<JobRecord | null> {
    const now = this.#now();
    const doc = await this.models.jobs
      .findOneAndUpdate(filter, { $set: { status, error, leaseUntil: null, updatedAt: now, completedAt: now }, $unset: { activeServiceId: 1 } }, { new: true })
      .lean<JobDoc>();
    return doc ? jobOf(doc) : null;
  }

  /** Switches the job's service to its model unless a later fit already did, then marks the job applied. */
  async #apply(job: JobDoc): Promise<DerivedServiceRecord | null> {
    const completedAt = job.completedAt ?? this.#now();
    const service = await this.models.derived
      .findOneAndUpdate(
        { _id: job.serviceId, $or: [{ fittedAt: null }, { fittedAt: { $lte: completedAt } }] },
        { $set: { modelDir: job.modelDir, fittedAt: completedAt, fittedByJobId: job._id, updatedAt: completedAt } },
        { new: true },
      )
      .lean<DerivedDoc>();
    await this.models.jobs.updateOne({ _id: job._id }, { $set: { applied: true } });
    return service ? derivedOf(service) : null;
  }

  async #load(id: number, doc: PayloadDoc): Promise<Buffer | null> {
    const read = await loadPayload(this.files, payloadOf(doc));
    if (read.kind === 'ok') return read.data;
    if (read.kind === 'missing') return null;
    throw new Error(`the stored content of dataset ${id} is corrupted`);
  }
}

function withoutId<T extends { id: number }>(input: T): Omit<T, 'id'> {
  const { id: _id, ...rest } = input;
  return rest;
}

function payloadOf(doc: PayloadDoc): StoredPayload {
  const inline = doc.inline === undefined || doc.inline === null ? undefined : toBuffer(doc.inline);
  return { size: doc.size, sha256: doc.sha256, ...(inline ? { inline } : {}), ...(doc.ref ? { ref: doc.ref } : {}) };
}

function datasetOf(doc: DatasetDoc): DatasetRecord {
  return {
    id: doc._id, accountId: doc.accountId, name: doc.name, description: doc.description ?? '', dataType: doc.dataType,
    encoding: doc.encoding, size: doc.content.size, targetsSize: doc.targets ? doc.targets.size : null, createdAt: doc.createdAt,
  };
}

function derivedOf(doc: DerivedDoc): DerivedServiceRecord {
  return {
    id: doc._id, accountId: doc.accountId, name: doc.name, description: doc.description ?? '', baseServiceId: doc.baseServiceId,
    modelDir: doc.modelDir ?? null, fittedAt: doc.fittedAt ?? null, fittedByJobId: doc.fittedByJobId ?? null,
    createdAt: doc.createdAt, updatedAt: doc.updatedAt,
  };
}

function jobOf(doc: JobDoc): JobRecord {
  return {
    jobId: doc._id, accountId: doc.accountId, serviceId: doc.serviceId, baseServiceId: doc.baseServiceId, datasetId: doc.datasetId,
    configId: doc.configId ?? null, config: doc.config ?? null, status: doc.status, percentage: doc.percentage ?? 0,
    modelDir: doc.modelDir, previousModelDir: doc.previousModelDir ?? null, runnerId: doc.runnerId, leaseUntil: doc.leaseUntil ?? null,
    error: doc.error ? { status: doc.error.status, code: doc.error.code, message: doc.error.message } : null,
    applied: doc.applied ?? false, createdAt: doc.createdAt, startedAt: doc.startedAt ?? null, updatedAt: doc.updatedAt,
    completedAt: doc.completedAt ?? null,
  };
}
