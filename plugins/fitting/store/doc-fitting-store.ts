/**
 * The fitting store on the store port, one implementation for every home (embedded, MongoDB, memory).
 * Each job transition is one compare-and-set whose filter holds the expected status and runner, so a
 * canceled or expired job ignores its old runner's writes. No transactions: a job's SUCCESS and the
 * switch of its derived service are two writes, and `applied` marks the second done so a crash
 * between them is repaired.
 *
 * Collections: datasets (large contents in the blob bucket `fittingDatasetFiles`), derived services,
 * jobs and ID sequences. Two unique indexes carry rules every gateway process must see alike: one
 * service name per account, and one active job per derived service (`activeServiceId` is set while a
 * job is PENDING or RUNNING and removed, with `$unset`, in the update that ends it: the task store's
 * slot idea, see core/tasks/doc-task-store.ts).
 */
import {
  deletePayload,
  gatewayError,
  isDuplicateKey,
  loadPayload,
  storePayload,
  type BlobStore,
  type Collection,
  type CollectionSpec,
  type DocStore,
  type Filter,
  type StoredPayload,
} from '../../../core/plugins/index.js';
import {
  activeJobConflict,
  nameTaken,
  type DatasetContent,
  type DatasetEncoding,
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

export const DATASET_FILES_BUCKET = 'fittingDatasetFiles';

export interface DatasetDoc {
  _id: number;
  accountId: number;
  name: string;
  description: string;
  dataType: string;
  encoding: DatasetEncoding;
  content: StoredPayload;
  targets: StoredPayload | null;
  createdAt: number;
}

/** A derived service as stored: the record with `id` as `_id`. */
export type DerivedDoc = Omit<DerivedServiceRecord, 'id'> & { _id: number };

/** A job record as stored: the record with `jobId` as `_id`, plus the active-job marker. */
export type JobDoc = Omit<JobRecord, 'jobId'> & {
  _id: number;
  /** Set while the job is not final; a unique index on it allows one active job per service. */
  activeServiceId?: number;
};

interface CounterDoc {
  _id: string;
  seq: number;
}

export const FITTING_COLLECTIONS = {
  datasets: { name: 'fittingDatasets', indexes: [{ name: 'account_id', fields: ['accountId'] }] },
  derived: { name: 'fittingServices', indexes: [{ name: 'account_name_unique', fields: ['accountId', 'name'], unique: true }] },
  jobs: {
    name: 'fittingJobs',
    indexes: [
      { name: 'activeServiceId_unique', fields: ['activeServiceId'], unique: true },
      { name: 'account_created', fields: ['accountId', 'createdAt'] },
      { name: 'status_lease', fields: ['status', 'leaseUntil'] },
    ],
  },
  counters: { name: 'fittingCounters', indexes: [] },
} satisfies Record<string, CollectionSpec>;

export interface DocFittingStoreOptions extends FittingStoreOptions {
  docs: DocStore;
}

/** Dataset contents up to this size stay in the document; larger ones go to the blobs. */
const INLINE_MAX_BYTES = 1024 * 1024;
const ACTIVE: JobStatus[] = ['PENDING', 'RUNNING'];

export class DocFittingStore implements FittingStore {
  readonly files: BlobStore;
  readonly #now: () => number;

  private constructor(
    readonly datasets: Collection<DatasetDoc>,
    readonly derived: Collection<DerivedDoc>,
    readonly jobs: Collection<JobDoc>,
    readonly counters: Collection<CounterDoc>,
    docs: DocStore,
    options: FittingStoreOptions,
  ) {
    this.#now = options.now ?? Date.now;
    this.files = docs.blobs(DATASET_FILES_BUCKET);
  }

  static async open(options: DocFittingStoreOptions): Promise<DocFittingStore> {
    const { docs } = options;
    const c = FITTING_COLLECTIONS;
    const store = new DocFittingStore(
      await docs.collection<DatasetDoc>(c.datasets),
      await docs.collection<DerivedDoc>(c.derived),
      await docs.collection<JobDoc>(c.jobs),
      await docs.collection<CounterDoc>(c.counters),
      docs,
      options,
    );
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
      await this.counters.insert({ _id: sequence, seq: 0 });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  /**
   * The next ID of a sequence, by compare-and-set: read the counter, then move it on only if nobody
   * else did meanwhile (the match is decided inside the atomic update). A findOneAndUpdate with
   * `$inc` would be simpler, but mongo-java-server reads the returned document back outside its lock,
   * so two callers can be shown the same value.
   */
  async nextId(sequence: Sequence): Promise<number> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const current = await this.counters.get(sequence);
      if (!current) {
        await this.#ensureCounter(sequence);
        continue;
      }
      const next = current.seq + 1;
      const matched = await this.counters.updateMany({ _id: sequence, seq: current.seq }, { $set: { seq: next } });
      if (matched === 1) return next;
    }
    throw new Error(`sequence ${sequence} could not be advanced: too much contention`);
  }

  async createDataset(input: NewDataset): Promise<DatasetRecord> {
    const { content, targets, ...rest } = input;
    const meta = { datasetId: String(input.id) };
    const storedContent = await storePayload(this.files, `dataset-${input.id}`, content, INLINE_MAX_BYTES, { ...meta, part: 'content' });
    let storedTargets: StoredPayload | null = null;
    try {
      if (targets)
        storedTargets = await storePayload(this.files, `dataset-${input.id}.targets`, targets, INLINE_MAX_BYTES, {
          ...meta,
          part: 'targets',
        });
      const doc: DatasetDoc = { _id: input.id, ...rest, content: storedContent, targets: storedTargets, createdAt: this.#now() };
      await this.datasets.insert(doc);
      return datasetOf(doc);
    } catch (err) {
      await deletePayload(this.files, storedContent);
      await deletePayload(this.files, storedTargets);
      throw err;
    }
  }

  async getDataset(id: number): Promise<DatasetRecord | null> {
    const doc = await this.datasets.get(id);
    return doc ? datasetOf(doc) : null;
  }

  async listDatasets(accountId: number): Promise<DatasetRecord[]> {
    const docs = await this.datasets.find({ accountId }, { sort: { _id: 1 } });
    return docs.map(datasetOf);
  }

  async readDataset(id: number): Promise<DatasetContent | null> {
    const doc = await this.datasets.get(id);
    if (!doc) return null;
    const content = await this.#load(id, doc.content);
    if (content === null) return null;
    const targets = doc.targets ? await this.#load(id, doc.targets) : null;
    return { content, targets };
  }

  async deleteDataset(id: number): Promise<boolean> {
    const doc = await this.datasets.get(id);
    if (!doc || (await this.datasets.deleteMany({ _id: id })) === 0) return false;
    await deletePayload(this.files, doc.content);
    if (doc.targets) await deletePayload(this.files, doc.targets);
    return true;
  }

  async createDerived(input: NewDerivedService): Promise<DerivedServiceRecord> {
    const now = this.#now();
    const doc: DerivedDoc = {
      _id: input.id,
      ...withoutId(input),
      modelDir: null,
      fittedAt: null,
      fittedByJobId: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.derived.insert(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw nameTaken(input.name);
      throw err;
    }
    return derivedOf(doc);
  }

  async getDerived(id: number): Promise<DerivedServiceRecord | null> {
    const doc = await this.derived.get(id);
    return doc ? derivedOf(doc) : null;
  }

  async listDerived(accountId?: number): Promise<DerivedServiceRecord[]> {
    const docs = await this.derived.find(accountId === undefined ? {} : { accountId }, { sort: { _id: 1 } });
    return docs.map(derivedOf);
  }

  async deleteDerived(id: number): Promise<DeleteOutcome> {
    if ((await this.jobs.count({ activeServiceId: id })) > 0) return 'busy';
    return (await this.derived.deleteMany({ _id: id })) === 1 ? 'deleted' : 'missing';
  }

  async createJob(input: NewJob): Promise<JobRecord> {
    const now = this.#now();
    const { jobId, leaseMs, ...rest } = input;
    const doc: JobDoc = {
      _id: jobId,
      ...rest,
      status: 'PENDING',
      percentage: 0,
      leaseUntil: now + leaseMs,
      error: null,
      applied: false,
      createdAt: now,
      startedAt: null,
      updatedAt: now,
      completedAt: null,
      activeServiceId: input.serviceId,
    };
    try {
      await this.jobs.insert(doc);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const active = await this.jobs.findOne({ activeServiceId: input.serviceId });
      throw active ? activeJobConflict(active._id) : gatewayError('CONFLICT', { args: { reason: `Job ${jobId} exists` } });
    }
    return jobOf(doc);
  }

  async getJob(jobId: number): Promise<JobRecord | null> {
    const doc = await this.jobs.get(jobId);
    return doc ? jobOf(doc) : null;
  }

  async listJobs(accountId: number, limit: number): Promise<JobRecord[]> {
    const docs = await this.jobs.find({ accountId }, { sort: { createdAt: -1, _id: -1 }, limit });
    return docs.map(jobOf);
  }

  async startJob(jobId: number, runnerId: string, leaseMs: number): Promise<JobRecord | null> {
    const now = this.#now();
    const doc = await this.jobs.findOneAndUpdate(
      { _id: jobId, runnerId, status: 'PENDING' },
      { $set: { status: 'RUNNING', startedAt: now, updatedAt: now, leaseUntil: now + leaseMs } },
    );
    return doc ? jobOf(doc) : null;
  }

  async reportProgress(jobId: number, runnerId: string, percentage: number, leaseMs: number): Promise<boolean> {
    const now = this.#now();
    const matched = await this.jobs.updateMany(
      { _id: jobId, runnerId, status: 'RUNNING' },
      { $set: { percentage, updatedAt: now, leaseUntil: now + leaseMs } },
    );
    return matched === 1;
  }

  /** One write for all; only when some lease was refused, one read tells which. */
  async renewLeases(jobIds: readonly number[], runnerId: string, leaseMs: number): Promise<Set<number>> {
    if (jobIds.length === 0) return new Set();
    const filter: Filter = { _id: { $in: [...jobIds] }, runnerId, status: { $in: ACTIVE } };
    const matched = await this.jobs.updateMany(filter, { $set: { leaseUntil: this.#now() + leaseMs } });
    if (matched === jobIds.length) return new Set(jobIds);
    const held = await this.jobs.find(filter);
    return new Set(held.map((d) => d._id));
  }

  async completeJob(jobId: number, runnerId: string): Promise<JobRecord | null> {
    const now = this.#now();
    const doc = await this.jobs.findOneAndUpdate(
      { _id: jobId, runnerId, status: 'RUNNING' },
      {
        $set: { status: 'SUCCESS', percentage: 100, leaseUntil: null, updatedAt: now, completedAt: now, applied: false },
        $unset: ['activeServiceId'],
      },
    );
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
    const filter: Filter = { status: { $in: ACTIVE }, leaseUntil: { $lt: now } };
    const candidates = await this.jobs.find(filter, { limit: 1000 });
    const expired: JobRecord[] = [];
    for (const { _id } of candidates) {
      const job = await this.#finish({ ...filter, _id }, 'FAILED', error);
      if (job) expired.push(job);
    }
    return expired;
  }

  async applyPendingResults(): Promise<DerivedServiceRecord[]> {
    const pending = await this.jobs.find({ status: 'SUCCESS', applied: false }, { sort: { completedAt: 1 }, limit: 1000 });
    const switched: DerivedServiceRecord[] = [];
    for (const job of pending) {
      const service = await this.#apply(job);
      if (service) switched.push(service);
    }
    return switched;
  }

  /** Nothing to close: the store port is the gateway's. */
  async close(): Promise<void> {}

  async #finish(filter: Filter, status: 'FAILED' | 'CANCELED', error: JobError | null): Promise<JobRecord | null> {
    const now = this.#now();
    const doc = await this.jobs.findOneAndUpdate(filter, {
      $set: { status, error, leaseUntil: null, updatedAt: now, completedAt: now },
      $unset: ['activeServiceId'],
    });
    return doc ? jobOf(doc) : null;
  }

  /** Switches the job's service to its model unless a later fit already did, then marks the job applied. */
  async #apply(job: JobDoc): Promise<DerivedServiceRecord | null> {
    const completedAt = job.completedAt ?? this.#now();
    const service = await this.derived.findOneAndUpdate(
      { _id: job.serviceId, $or: [{ fittedAt: null }, { fittedAt: { $lte: completedAt } }] },
      { $set: { modelDir: job.modelDir, fittedAt: completedAt, fittedByJobId: job._id, updatedAt: completedAt } },
    );
    await this.jobs.updateMany({ _id: job._id }, { $set: { applied: true } });
    return service ? derivedOf(service) : null;
  }

  async #load(id: number, doc: StoredPayload): Promise<Buffer | null> {
    const read = await loadPayload(this.files, doc);
    if (read.kind === 'ok') return read.data;
    if (read.kind === 'missing') return null;
    throw new Error(`the stored content of dataset ${id} is corrupted`);
  }
}

function withoutId<T extends { id: number }>(input: T): Omit<T, 'id'> {
  const { id: _id, ...rest } = input;
  return rest;
}

function datasetOf(doc: DatasetDoc): DatasetRecord {
  return {
    id: doc._id,
    accountId: doc.accountId,
    name: doc.name,
    description: doc.description ?? '',
    dataType: doc.dataType,
    encoding: doc.encoding,
    size: doc.content.size,
    targetsSize: doc.targets ? doc.targets.size : null,
    createdAt: doc.createdAt,
  };
}

function derivedOf(doc: DerivedDoc): DerivedServiceRecord {
  return {
    id: doc._id,
    accountId: doc.accountId,
    name: doc.name,
    description: doc.description ?? '',
    baseServiceId: doc.baseServiceId,
    modelDir: doc.modelDir ?? null,
    fittedAt: doc.fittedAt ?? null,
    fittedByJobId: doc.fittedByJobId ?? null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

function jobOf(doc: JobDoc): JobRecord {
  return {
    jobId: doc._id,
    accountId: doc.accountId,
    serviceId: doc.serviceId,
    baseServiceId: doc.baseServiceId,
    datasetId: doc.datasetId,
    configId: doc.configId ?? null,
    config: doc.config ?? null,
    status: doc.status,
    percentage: doc.percentage ?? 0,
    modelDir: doc.modelDir,
    previousModelDir: doc.previousModelDir ?? null,
    runnerId: doc.runnerId,
    leaseUntil: doc.leaseUntil ?? null,
    error: doc.error ? { status: doc.error.status, code: doc.error.code, message: doc.error.message } : null,
    applied: doc.applied ?? false,
    createdAt: doc.createdAt,
    startedAt: doc.startedAt ?? null,
    updatedAt: doc.updatedAt,
    completedAt: doc.completedAt ?? null,
  };
}
