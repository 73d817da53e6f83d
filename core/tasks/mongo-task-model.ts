/**
 * The `tasks` collection: schema, stored document shape and indexes.
 *
 * Caps are enforced by two sparse unique indexes rather than counters: a QUEUED task holds a
 * `queueSlot` "<callerId>:<n>" with n < maxQueuedPerAccount, a PROCESSING task a `runSlot`
 * "<callerId>:<n>" with n < maxRunningPerAccount, and each slot is removed ($unset) in the same
 * update that moves the task out of that status. MongoDB itself then refuses a (cap+1)-th task
 * (duplicate key), across any number of gateway processes. A counter document updated with
 * `{queued: {$lt: cap}}` + `$inc` would need a second write per transition, and a process dying
 * between the two writes leaves the counter wrong for good; a slot lives and dies with its task.
 */
import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import type { Logger } from '../logger.js';
import type { TaskRequestKind, TaskStatus } from './task-store.js';

export const TASKS_COLLECTION = 'tasks';
export const TASK_FILES_BUCKET = 'taskFiles';

export interface PayloadDoc {
  size: number;
  sha256: string;
  /** A Buffer when written; lean reads return a BSON Binary. */
  inline?: Buffer | mongoose.mongo.Binary;
  /** GridFS file id (hex). */
  ref?: string;
}

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
  /** TTL backstop only (real MongoDB); the reaper removes tasks before it. */
  expireAt: Date | null;
  request: { kind: TaskRequestKind; configId?: number; dataType?: string; config?: string; contentType?: string; keyName?: string; body: PayloadDoc };
  leaseToken: string | null;
  leaseUntil: number | null;
  workerId: string | null;
  attempt: number;
  queueSlot?: string;
  runSlot?: string;
  result: { statusCode: number; headers: PairDoc[]; body: PayloadDoc } | null;
  error: { status: number; code: string; message: string; args: PairDoc[] } | null;
}

const payloadSchema = new Schema<PayloadDoc>(
  { size: { type: Number, required: true }, sha256: { type: String, required: true }, inline: Buffer, ref: String },
  { _id: false },
);
const pairSchema = new Schema<PairDoc>({ name: String, value: String }, { _id: false });

const taskSchema = new Schema<TaskDoc>(
  {
    _id: { type: String, required: true },
    callerId: { type: Number, required: true },
    serviceId: { type: Number, required: true },
    serviceAccountId: { type: Number, required: true },
    status: { type: String, required: true },
    createdAt: { type: Number, required: true },
    completedAt: { type: Number, default: null },
    expireAt: { type: Date, default: null },
    request: {
      kind: { type: String, required: true },
      configId: Number,
      dataType: String,
      config: String,
      contentType: String,
      keyName: String,
      body: { type: payloadSchema, required: true },
    },
    leaseToken: { type: String, default: null },
    leaseUntil: { type: Number, default: null },
    workerId: { type: String, default: null },
    attempt: { type: Number, default: 0 },
    queueSlot: String,
    runSlot: String,
    result: {
      type: new Schema({ statusCode: Number, headers: [pairSchema], body: payloadSchema }, { _id: false }),
      default: null,
    },
    error: {
      type: new Schema({ status: Number, code: String, message: String, args: [pairSchema] }, { _id: false }),
      default: null,
    },
  },
  { versionKey: false, collection: TASKS_COLLECTION, autoIndex: false, strict: true },
);

export type TaskModel = Model<TaskDoc>;

export function taskModel(connection: Connection): TaskModel {
  return (connection.models.Task as TaskModel | undefined) ?? connection.model<TaskDoc>('Task', taskSchema);
}

/**
 * The slot indexes carry the caps, so failing to create them stops the store. The others only speed
 * queries up (mongo-java-server accepts and ignores them) or back the reaper up (TTL: real MongoDB
 * only), so a failure is logged and the store goes on.
 */
export async function ensureTaskIndexes(model: TaskModel, logger?: Logger): Promise<void> {
  const collection = model.collection;
  await collection.createIndex({ queueSlot: 1 }, { unique: true, sparse: true, name: 'queueSlot_unique' });
  await collection.createIndex({ runSlot: 1 }, { unique: true, sparse: true, name: 'runSlot_unique' });
  const optional: Array<[Record<string, 1>, mongoose.mongo.CreateIndexesOptions]> = [
    [{ status: 1, createdAt: 1 }, { name: 'claim_order' }],
    [{ callerId: 1, status: 1 }, { name: 'caller_status' }],
    [{ completedAt: 1 }, { name: 'completedAt' }],
    [{ expireAt: 1 }, { name: 'expireAt_ttl', expireAfterSeconds: 0 }],
  ];
  for (const [keys, options] of optional) {
    try {
      await collection.createIndex(keys, options);
    } catch (err) {
      logger?.warn({ err, index: options.name }, 'task index not created; continuing without it');
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

export const toPairs = (record: Record<string, string>): PairDoc[] =>
  Object.entries(record).map(([name, value]) => ({ name, value }));

export function fromPairs(pairs: readonly PairDoc[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of pairs ?? []) out[name] = value;
  return out;
}
