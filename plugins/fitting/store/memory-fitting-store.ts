/**
 * The zero-setup fitting store: everything in process memory, gone at restart. Every method runs
 * synchronously between awaits, so each transition is atomic within the process.
 */
import { gatewayError } from '../../../core/plugins/index.js';
import {
  activeJobConflict,
  isFinalJobStatus,
  nameTaken,
  type DatasetContent,
  type DatasetRecord,
  type DeleteOutcome,
  type DerivedServiceRecord,
  type FittingStore,
  type FittingStoreOptions,
  type JobError,
  type JobRecord,
  type NewDataset,
  type NewDerivedService,
  type NewJob,
  type Sequence,
} from './fitting-store.js';

interface StoredDataset {
  record: DatasetRecord;
  content: DatasetContent;
}

export class MemoryFittingStore implements FittingStore {
  readonly #now: () => number;
  readonly #sequences = new Map<string, number>();
  readonly #datasets = new Map<number, StoredDataset>();
  readonly #derived = new Map<number, DerivedServiceRecord>();
  readonly #jobs = new Map<number, JobRecord>();

  constructor(options: FittingStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async nextId(sequence: Sequence): Promise<number> {
    const next = (this.#sequences.get(sequence) ?? 0) + 1;
    this.#sequences.set(sequence, next);
    return next;
  }

  async createDataset(input: NewDataset): Promise<DatasetRecord> {
    const { content, targets, ...rest } = input;
    const record: DatasetRecord = { ...rest, size: content.length, targetsSize: targets ? targets.length : null, createdAt: this.#now() };
    this.#datasets.set(input.id, { record, content: { content: Buffer.from(content), targets: targets ? Buffer.from(targets) : null } });
    return { ...record };
  }

  async getDataset(id: number): Promise<DatasetRecord | null> {
    const found = this.#datasets.get(id);
    return found ? { ...found.record } : null;
  }

  async listDatasets(accountId: number): Promise<DatasetRecord[]> {
    return [...this.#datasets.values()].filter((d) => d.record.accountId === accountId).map((d) => ({ ...d.record })).sort((a, b) => a.id - b.id);
  }

  async readDataset(id: number): Promise<DatasetContent | null> {
    return this.#datasets.get(id)?.content ?? null;
  }

  async deleteDataset(id: number): Promise<boolean> {
    return this.#datasets.delete(id);
  }

  async createDerived(input: NewDerivedService): Promise<DerivedServiceRecord> {
    for (const existing of this.#derived.values()) {
      if (existing.accountId === input.accountId && existing.name === input.name) throw nameTaken(input.name);
    }
    if (this.#derived.has(input.id)) throw gatewayError('CONFLICT', { args: { reason: `A derived service with id ${input.id} exists` } });
    const now = this.#now();
    const record: DerivedServiceRecord = { ...input, modelDir: null, fittedAt: null, fittedByJobId: null, createdAt: now, updatedAt: now };
    this.#derived.set(input.id, record);
    return { ...record };
  }

  async getDerived(id: number): Promise<DerivedServiceRecord | null> {
    const found = this.#derived.get(id);
    return found ? { ...found } : null;
  }

  async listDerived(accountId?: number): Promise<DerivedServiceRecord[]> {
    return [...this.#derived.values()].filter((d) => accountId === undefined || d.accountId === accountId).map((d) => ({ ...d })).sort((a, b) => a.id - b.id);
  }

  async deleteDerived(id: number): Promise<DeleteOutcome> {
    if (!this.#derived.has(id)) return 'missing';
    if (this.#activeJobOf(id)) return 'busy';
    this.#derived.delete(id);
    return 'deleted';
  }

  async createJob(input: NewJob): Promise<JobRecord> {
    const active = this.#activeJobOf(input.serviceId);
    if (active) throw activeJobConflict(active.jobId);
    const now = this.#now();
    const { leaseMs, ...rest } = input;
    const record: JobRecord = {
      ...rest, status: 'PENDING', percentage: 0, leaseUntil: now + leaseMs, error: null, applied: false,
      createdAt: now, startedAt: null, updatedAt: now, completedAt: null,
    };
    this.#jobs.set(record.jobId, record);
    return { ...record };
  }

  async getJob(jobId: number): Promise<JobRecord | null> {
    const found = this.#jobs.get(jobId);
    return found ? { ...found } : null;
  }

  async listJobs(accountId: number, limit: number): Promise<JobRecord[]> {
    return [...this.#jobs.values()]
      .filter((j) => j.accountId === accountId)
      .sort((a, b) => b.createdAt - a.createdAt || b.jobId - a.jobId)
      .slice(0, limit)
      .map((j) => ({ ...j }));
  }

  async startJob(jobId: number, runnerId: string, leaseMs: number): Promise<JobRecord | null> {
    const job = this.#ownJob(jobId, runnerId, ['PENDING']);
    if (!job) return null;
    const now = this.#now();
    Object.assign(job, { status: 'RUNNING', startedAt: now, updatedAt: now, leaseUntil: now + leaseMs });
    return { ...job };
  }

  async reportProgress(jobId: number, runnerId: string, percentage: number, leaseMs: number): Promise<boolean> {
    const job = this.#ownJob(jobId, runnerId, ['RUNNING']);
    if (!job) return false;
    const now = this.#now();
    Object.assign(job, { percentage, updatedAt: now, leaseUntil: now + leaseMs });
    return true;
  }

  async renewLeases(jobIds: readonly number[], runnerId: string, leaseMs: number): Promise<Set<number>> {
    const held = new Set<number>();
    const until = this.#now() + leaseMs;
    for (const jobId of jobIds) {
      const job = this.#ownJob(jobId, runnerId, ['PENDING', 'RUNNING']);
      if (!job) continue;
      job.leaseUntil = until;
      held.add(jobId);
    }
    return held;
  }

  async completeJob(jobId: number, runnerId: string): Promise<JobRecord | null> {
    const job = this.#ownJob(jobId, runnerId, ['RUNNING']);
    if (!job) return null;
    const now = this.#now();
    Object.assign(job, { status: 'SUCCESS', percentage: 100, leaseUntil: null, updatedAt: now, completedAt: now });
    this.#apply(job);
    return { ...job };
  }

  async failJob(jobId: number, runnerId: string, error: JobError): Promise<JobRecord | null> {
    const job = this.#ownJob(jobId, runnerId, ['PENDING', 'RUNNING']);
    if (!job) return null;
    this.#finish(job, 'FAILED', error);
    return { ...job };
  }

  async cancelJob(jobId: number): Promise<JobRecord | null> {
    const job = this.#jobs.get(jobId);
    if (!job) return null;
    if (!isFinalJobStatus(job.status)) this.#finish(job, 'CANCELED', null);
    return { ...job };
  }

  async expireJobs(now: number, error: JobError): Promise<JobRecord[]> {
    const expired: JobRecord[] = [];
    for (const job of this.#jobs.values()) {
      if (!isFinalJobStatus(job.status) && job.leaseUntil !== null && job.leaseUntil < now) {
        this.#finish(job, 'FAILED', error);
        expired.push({ ...job });
      }
    }
    return expired;
  }

  async applyPendingResults(): Promise<DerivedServiceRecord[]> {
    const switched: DerivedServiceRecord[] = [];
    for (const job of this.#jobs.values()) {
      if (job.status === 'SUCCESS' && !job.applied) {
        const service = this.#apply(job);
        if (service) switched.push({ ...service });
      }
    }
    return switched;
  }

  async close(): Promise<void> {
    this.#datasets.clear();
    this.#derived.clear();
    this.#jobs.clear();
  }

  #activeJobOf(serviceId: number): JobRecord | undefined {
    for (const job of this.#jobs.values()) if (job.serviceId === serviceId && !isFinalJobStatus(job.status)) return job;
    return undefined;
  }

  #ownJob(jobId: number, runnerId: string, statuses: readonly JobRecord['status'][]): JobRecord | undefined {
    const job = this.#jobs.get(jobId);
    return job && job.runnerId === runnerId && statuses.includes(job.status) ? job : undefined;
  }

  #finish(job: JobRecord, status: 'FAILED' | 'CANCELED', error: JobError | null): void {
    const now = this.#now();
    Object.assign(job, { status, error, leaseUntil: null, updatedAt: now, completedAt: now });
  }

  /** Switches the job's service to its model unless a later fit already did. */
  #apply(job: JobRecord): DerivedServiceRecord | undefined {
    job.applied = true;
    const service = this.#derived.get(job.serviceId);
    const completedAt = job.completedAt ?? this.#now();
    if (!service || (service.fittedAt !== null && service.fittedAt > completedAt)) return undefined;
    Object.assign(service, { modelDir: job.modelDir, fittedAt: completedAt, fittedByJobId: job.jobId, updatedAt: completedAt });
    return service;
  }
}
