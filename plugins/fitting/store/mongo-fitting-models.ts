/**
 * The fitting collections: datasets (large contents in the GridFS bucket `fittingDatasetFiles`),
 * derived services, jobs and ID sequences. Two unique indexes carry rules every gateway process must
 * see alike, so failing to create them stops the store: one service name per account, and one active
 * job per derived service (`activeServiceId` is set while a job is PENDING or RUNNING and removed, with
 * `$unset`, in the update that ends it: the task store's slot idea, see core/tasks/mongo-task-model.ts).
 */
import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import type { DatasetEncoding, DerivedServiceRecord, JobRecord } from './fitting-store.js';

export const DATASET_FILES_BUCKET = 'fittingDatasetFiles';

export interface PayloadDoc {
  size: number;
  sha256: string;
  inline?: Buffer | mongoose.mongo.Binary;
  ref?: string;
}

export interface DatasetDoc {
  _id: number;
  accountId: number;
  name: string;
  description: string;
  dataType: string;
  encoding: DatasetEncoding;
  content: PayloadDoc;
  targets: PayloadDoc | null;
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

export interface CounterDoc {
  _id: string;
  seq: number;
}

const options = { versionKey: false as const, autoIndex: false, strict: true };
const payloadSchema = new Schema<PayloadDoc>(
  { size: { type: Number, required: true }, sha256: { type: String, required: true }, inline: Buffer, ref: String },
  { _id: false },
);

const datasetSchema = new Schema<DatasetDoc>({
  _id: { type: Number, required: true },
  accountId: { type: Number, required: true },
  name: { type: String, required: true },
  description: { type: String, default: '' },
  dataType: { type: String, required: true },
  encoding: { type: String, required: true },
  content: { type: payloadSchema, required: true },
  targets: { type: payloadSchema, default: null },
  createdAt: { type: Number, required: true },
}, { ...options, collection: 'fittingDatasets' });

const derivedSchema = new Schema<DerivedDoc>({
  _id: { type: Number, required: true },
  accountId: { type: Number, required: true },
  name: { type: String, required: true },
  description: { type: String, default: '' },
  baseServiceId: { type: Number, required: true },
  modelDir: { type: String, default: null },
  fittedAt: { type: Number, default: null },
  fittedByJobId: { type: Number, default: null },
  createdAt: { type: Number, required: true },
  updatedAt: { type: Number, required: true },
}, { ...options, collection: 'fittingServices' });

const jobSchema = new Schema<JobDoc>({
  _id: { type: Number, required: true },
  accountId: { type: Number, required: true },
  serviceId: { type: Number, required: true },
  baseServiceId: { type: Number, required: true },
  datasetId: { type: Number, required: true },
  configId: { type: Number, default: null },
  config: { type: String, default: null },
  status: { type: String, required: true },
  percentage: { type: Number, default: 0 },
  modelDir: { type: String, required: true },
  previousModelDir: { type: String, default: null },
  runnerId: { type: String, required: true },
  leaseUntil: { type: Number, default: null },
  error: { type: new Schema({ status: Number, code: String, message: String }, { _id: false }), default: null },
  applied: { type: Boolean, default: false },
  createdAt: { type: Number, required: true },
  startedAt: { type: Number, default: null },
  updatedAt: { type: Number, required: true },
  completedAt: { type: Number, default: null },
  activeServiceId: Number,
}, { ...options, collection: 'fittingJobs' });

const counterSchema = new Schema<CounterDoc>({ _id: { type: String, required: true }, seq: { type: Number, required: true } },
  { ...options, collection: 'fittingCounters' });

export interface FittingModels {
  datasets: Model<DatasetDoc>;
  derived: Model<DerivedDoc>;
  jobs: Model<JobDoc>;
  counters: Model<CounterDoc>;
}

function model<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}

export function fittingModels(connection: Connection): FittingModels {
  return {
    datasets: model(connection, 'FittingDataset', datasetSchema),
    derived: model(connection, 'FittingService', derivedSchema),
    jobs: model(connection, 'FittingJob', jobSchema),
    counters: model(connection, 'FittingCounter', counterSchema),
  };
}

/** The unique indexes are rules (a failure stops the store); the others only speed queries up. */
export async function ensureFittingIndexes(models: FittingModels, warn: (index: string, err: unknown) => void): Promise<void> {
  await models.derived.collection.createIndex({ accountId: 1, name: 1 }, { unique: true, name: 'account_name_unique' });
  await models.jobs.collection.createIndex({ activeServiceId: 1 }, { unique: true, sparse: true, name: 'activeServiceId_unique' });
  const optional: Array<[Model<any>, Record<string, 1 | -1>, string]> = [
    [models.datasets, { accountId: 1, _id: 1 }, 'account_id'],
    [models.jobs, { accountId: 1, createdAt: -1 }, 'account_created'],
    [models.jobs, { status: 1, leaseUntil: 1 }, 'status_lease'],
  ];
  for (const [target, keys, name] of optional) {
    try {
      await target.collection.createIndex(keys, { name });
    } catch (err) {
      warn(name, err);
    }
  }
}

/** A Buffer from what a lean read returns for a Buffer path. */
export function toBuffer(value: unknown): Buffer | undefined {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof mongoose.mongo.Binary) return Buffer.from(value.buffer.subarray(0, value.length()));
  if (value instanceof Uint8Array) return Buffer.from(value);
  return undefined;
}
