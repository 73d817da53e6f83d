/**
 * The fitting plugin's state: datasets, derived (fitted) services and fitting jobs, with explicit job
 * transitions. Two implementations pass one conformance suite (test/plugins/fitting-store.conformance.ts):
 * `MemoryFittingStore` (the zero-setup default, one process, gone at restart) and `MongoFittingStore`
 * (several gateway processes on one MongoDB; survives restarts), in the task store's patterns.
 *
 *   create ──► PENDING ──start──► RUNNING ──complete──► SUCCESS (the derived service gets the model)
 *                 │                  │  └─────fail─────► FAILED (the error is kept)
 *                 │                  └ lease expired ──► FAILED (FITTING_INTERRUPTED)
 *                 └──────cancel──────┴──────cancel─────► CANCELED
 *
 * A job belongs to the gateway process that created it (`runnerId`), which renews its lease while it
 * runs. Every write by the runner names its runnerId, so once a job was canceled (on any gateway) or
 * expired, the runner's writes change nothing and tell it to stop. At most one job per derived
 * service is PENDING or RUNNING at a time (a second one is a 409 CONFLICT).
 */
import { gatewayError, type GatewayError } from '../../../core/plugins/index.js';

export type JobStatus = 'PENDING' | 'RUNNING' | 'SUCCESS' | 'FAILED' | 'CANCELED';
export const JOB_STATUSES: readonly JobStatus[] = ['PENDING', 'RUNNING', 'SUCCESS', 'FAILED', 'CANCELED'];
export const isFinalJobStatus = (status: JobStatus): boolean => status === 'SUCCESS' || status === 'FAILED' || status === 'CANCELED';

/** How a dataset's bytes reach a service: `text` as a JSON-member payload, `binary` as protobuf bytes. */
export type DatasetEncoding = 'text' | 'binary';

export interface NewDataset {
  id: number;
  accountId: number;
  name: string;
  description: string;
  dataType: string;
  encoding: DatasetEncoding;
  content: Buffer;
  /** The targets (labels) of a supervised dataset, kept apart as the fit request sends them. */
  targets: Buffer | null;
}

export interface DatasetRecord {
  id: number;
  accountId: number;
  name: string;
  description: string;
  dataType: string;
  encoding: DatasetEncoding;
  size: number;
  /** Size of the targets; null when the dataset has none. */
  targetsSize: number | null;
  createdAt: number;
}

export interface DatasetContent {
  content: Buffer;
  targets: Buffer | null;
}

export interface NewDerivedService {
  id: number;
  accountId: number;
  name: string;
  description: string;
  baseServiceId: number;
}

export interface DerivedServiceRecord {
  id: number;
  /** The owner: the account that created it. */
  accountId: number;
  name: string;
  description: string;
  /** The fittable service whose instances fit and serve it. */
  baseServiceId: number;
  /** The fitted model in use; null until the first job reaches SUCCESS. */
  modelDir: string | null;
  fittedAt: number | null;
  fittedByJobId: number | null;
  createdAt: number;
  updatedAt: number;
}

/** Why a job failed: the fields of a catalog GatewayError or of the service's own error. */
export interface JobError {
  status: number;
  code: string;
  message: string;
}

/** A job's error from a thrown GatewayError; an internal one keeps only the generic text, as HTTP does. */
export const jobErrorOf = (err: GatewayError): JobError => ({
  status: err.status,
  code: err.code,
  message: err.expose ? err.message : 'Internal gateway error',
});

export interface NewJob {
  /** From `nextId('job')`: an int64 number, as the platform's API and its public SDK's client expect. */
  jobId: number;
  accountId: number;
  serviceId: number;
  baseServiceId: number;
  datasetId: number;
  configId: number | null;
  /** The fitting config sent, as JSON text; null when none. */
  config: string | null;
  modelDir: string;
  previousModelDir: string | null;
  runnerId: string;
  leaseMs: number;
}

export interface JobRecord {
  jobId: number;
  /** The owner: the account that started the fit (and owns the derived service). */
  accountId: number;
  /** The derived service being fitted. */
  serviceId: number;
  baseServiceId: number;
  datasetId: number;
  configId: number | null;
  config: string | null;
  status: JobStatus;
  /** 0..100, from the service's `fitStatus` messages; 100 on SUCCESS. */
  percentage: number;
  modelDir: string;
  previousModelDir: string | null;
  runnerId: string;
  leaseUntil: number | null;
  error: JobError | null;
  /** SUCCESS only: whether the derived service was switched to this job's model (see applyPendingResults). */
  applied: boolean;
  createdAt: number;
  startedAt: number | null;
  updatedAt: number;
  completedAt: number | null;
}

/** The ID sequences: datasets, derived services and jobs are numbered, as in the platform's API. */
export type Sequence = 'dataset' | 'derived' | 'job';
export const SEQUENCES: readonly Sequence[] = ['dataset', 'derived', 'job'];

export type DeleteOutcome = 'deleted' | 'missing' | 'busy';

export interface FittingStoreOptions {
  /** The clock (tests). */
  now?: () => number;
}

export interface FittingStore {
  /** The next number of a sequence (1, 2, …), unique across processes sharing the store. */
  nextId(sequence: Sequence): Promise<number>;

  createDataset(input: NewDataset): Promise<DatasetRecord>;
  getDataset(id: number): Promise<DatasetRecord | null>;
  /** The account's datasets, by ID. */
  listDatasets(accountId: number): Promise<DatasetRecord[]>;
  /** The bytes; null when the dataset is gone. Throws when stored bytes fail their checksum. */
  readDataset(id: number): Promise<DatasetContent | null>;
  deleteDataset(id: number): Promise<boolean>;

  /** Throws CONFLICT (409) when the account already has a derived service of that name. */
  createDerived(input: NewDerivedService): Promise<DerivedServiceRecord>;
  getDerived(id: number): Promise<DerivedServiceRecord | null>;
  /** One account's derived services, or every one (boot, sync), by ID. */
  listDerived(accountId?: number): Promise<DerivedServiceRecord[]>;
  /** `busy` while a job of the service is PENDING or RUNNING. */
  deleteDerived(id: number): Promise<DeleteOutcome>;

  /** A PENDING job leased to `runnerId`; throws CONFLICT (409) while the service has an active job. */
  createJob(input: NewJob): Promise<JobRecord>;
  getJob(jobId: number): Promise<JobRecord | null>;
  /** The account's jobs, newest first. */
  listJobs(accountId: number, limit: number): Promise<JobRecord[]>;
  /** PENDING → RUNNING by its runner; null when the job is no longer its (canceled, expired). */
  startJob(jobId: number, runnerId: string, leaseMs: number): Promise<JobRecord | null>;
  /** Records progress and renews the lease of a RUNNING job; false when it is no longer the runner's. */
  reportProgress(jobId: number, runnerId: string, percentage: number, leaseMs: number): Promise<boolean>;
  /**
   * Renews the leases of the runner's PENDING or RUNNING jobs in one batch; returns the IDs of those
   * still the runner's (a canceled or expired job is left unchanged).
   */
  renewLeases(jobIds: readonly number[], runnerId: string, leaseMs: number): Promise<Set<number>>;
  /**
   * RUNNING → SUCCESS, then switches the derived service to the job's model (modelDir, fittedAt).
   * Null when the job is no longer the runner's.
   */
  completeJob(jobId: number, runnerId: string): Promise<JobRecord | null>;
  /** PENDING or RUNNING → FAILED with the error kept; null when the job is no longer the runner's. */
  failJob(jobId: number, runnerId: string, error: JobError): Promise<JobRecord | null>;
  /** PENDING or RUNNING → CANCELED, by anyone; the record as it is afterwards (null when missing). */
  cancelJob(jobId: number): Promise<JobRecord | null>;
  /** PENDING or RUNNING jobs whose lease ran out before `now` → FAILED with `error`; returns them. */
  expireJobs(now: number, error: JobError): Promise<JobRecord[]>;
  /**
   * Finishes what a crash between a job's SUCCESS and the switch of its service left undone; returns
   * the services switched. Called at boot and by the periodic sweep.
   */
  applyPendingResults(): Promise<DerivedServiceRecord[]>;

  close(): Promise<void>;
}

/** 409: the account already has a service of that name (its own or a derived one). */
export const nameTaken = (name: string) =>
  gatewayError('CONFLICT', { param: 'name', args: { reason: `The account already has a service named '${name}'` } });

/** 409: the derived service already has a PENDING or RUNNING job. */
export const activeJobConflict = (jobId: number) =>
  gatewayError('CONFLICT', {
    args: { reason: `A fitting job of this service is already running (job ${jobId}); wait for it or cancel it` },
  });
