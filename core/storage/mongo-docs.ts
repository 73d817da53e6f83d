/**
 * The MongoDB home of the store port, on the gateway's one connection. Filters, updates and sorts are
 * MongoDB's own (the port is a subset of them); `findOneAndUpdate` is MongoDB's, atomic on the server.
 * Unique indexes are created unique + sparse and a failure stops the store (they carry caps); other
 * indexes only speed queries up (mongo-java-server accepts and ignores them), so a failure is logged.
 * Blobs are GridFS buckets. No transactions and no `serverApi` (see mongo-connection.ts).
 */
import mongoose, { type Connection } from 'mongoose';
import type { Logger } from '../observe/logger.js';
import { GridFsBlobStore } from '../tasks/gridfs-blob-store.js';
import { setEntry } from './doc-match.js';
import { connectionDb, isDuplicateKeyError } from '../tasks/mongo-connection.js';
import {
  DuplicateKeyError,
  type Collection,
  type CollectionSpec,
  type CollectionStats,
  type Doc,
  type DocStore,
  type Filter,
  type FindOneAndUpdateOptions,
  type FindOptions,
  type SortSpec,
  type Update,
} from './port.js';

type MongoCollection = mongoose.mongo.Collection<mongoose.mongo.Document>;

/** BSON Binary (what the driver reads back for a Buffer) as Buffer, everywhere in a document. */
function fromBson<T>(value: unknown): T {
  if (value instanceof mongoose.mongo.Binary) return Buffer.from(value.buffer.subarray(0, value.length())) as T;
  if (Buffer.isBuffer(value)) return value as T;
  if (Array.isArray(value)) return value.map(fromBson) as T;
  if (value && typeof value === 'object' && !(value instanceof Date) && !(value instanceof mongoose.mongo.ObjectId)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setEntry(out, k, fromBson(v));
    return out as T;
  }
  return value as T;
}

function mongoUpdate(update: Update): mongoose.mongo.UpdateFilter<mongoose.mongo.Document> {
  const out: Record<string, Record<string, unknown>> = {};
  const set = Object.entries(update.$set ?? {}).filter(([, v]) => v !== undefined);
  const unset = [
    ...(update.$unset ?? []),
    ...Object.entries(update.$set ?? {})
      .filter(([, v]) => v === undefined)
      .map(([k]) => k),
  ];
  if (set.length) out.$set = Object.fromEntries(set);
  if (unset.length) out.$unset = Object.fromEntries(unset.map((k) => [k, 1]));
  if (update.$inc && Object.keys(update.$inc).length) out.$inc = { ...update.$inc };
  if (update.$setOnInsert && Object.keys(update.$setOnInsert).length) out.$setOnInsert = { ...update.$setOnInsert };
  return out;
}

/** The sort, then `_id` ascending as the tiebreak (the other homes' order), unless the sort names `_id` itself. */
const withIdOrder = (sort: SortSpec | undefined): Record<string, 1 | -1> => ({ ...(sort ?? {}), _id: sort?._id ?? 1 });

function duplicate(name: string, err: unknown): never {
  if (isDuplicateKeyError(err)) throw new DuplicateKeyError(name, (err as Error).message);
  throw err;
}

class MongoDocCollection<T extends Doc> implements Collection<T> {
  constructor(
    private readonly c: MongoCollection,
    readonly name: string,
  ) {}

  async get(id: T['_id']): Promise<T | null> {
    const doc = await this.c.findOne({ _id: id as never });
    return doc ? fromBson<T>(doc) : null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    let cursor = this.c.find(filter as mongoose.mongo.Filter<mongoose.mongo.Document>).sort(withIdOrder(options.sort));
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit !== undefined) cursor = cursor.limit(options.limit);
    return (await cursor.toArray()).map((d) => fromBson<T>(d));
  }

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    const [doc] = await this.find(filter, { ...options, limit: 1 });
    return doc ?? null;
  }

  count(filter: Filter): Promise<number> {
    return this.c.countDocuments(filter as mongoose.mongo.Filter<mongoose.mongo.Document>);
  }

  async sum(filter: Filter, paths: readonly string[]): Promise<number[]> {
    if (paths.length === 0) return [];
    const group: Record<string, unknown> = { _id: null };
    paths.forEach((p, i) => (group[`s${i}`] = { $sum: `$${p}` }));
    const [row] = await this.c.aggregate<Record<string, number>>([{ $match: filter }, { $group: group }]).toArray();
    return paths.map((_, i) => Number(row?.[`s${i}`] ?? 0));
  }

  async insert(doc: T): Promise<void> {
    try {
      await this.c.insertOne(doc as unknown as mongoose.mongo.Document);
    } catch (err) {
      duplicate(this.name, err);
    }
  }

  async findOneAndUpdate(filter: Filter, update: Update, options: FindOneAndUpdateOptions = {}): Promise<T | null> {
    try {
      const doc = await this.c.findOneAndUpdate(filter as mongoose.mongo.Filter<mongoose.mongo.Document>, mongoUpdate(update), {
        sort: options.sort ? withIdOrder(options.sort) : undefined,
        returnDocument: options.returnDocument ?? 'after',
        upsert: options.upsert ?? false,
        includeResultMetadata: false,
      });
      return doc ? fromBson<T>(doc) : null;
    } catch (err) {
      return duplicate(this.name, err);
    }
  }

  async updateMany(filter: Filter, update: Update): Promise<number> {
    try {
      const res = await this.c.updateMany(filter as mongoose.mongo.Filter<mongoose.mongo.Document>, mongoUpdate(update));
      return res.matchedCount;
    } catch (err) {
      return duplicate(this.name, err);
    }
  }

  async deleteMany(filter: Filter): Promise<number> {
    const res = await this.c.deleteMany(filter as mongoose.mongo.Filter<mongoose.mongo.Document>);
    return res.deletedCount;
  }
}

export class MongoDocStore implements DocStore {
  readonly home = 'mongodb' as const;
  private readonly opened = new Map<string, Promise<MongoDocCollection<Doc>>>();

  constructor(
    readonly connection: Connection,
    private readonly logger?: Logger,
  ) {}

  collection<T extends Doc>(spec: CollectionSpec): Promise<Collection<T>> {
    let opening = this.opened.get(spec.name);
    if (!opening) {
      opening = this.open(spec);
      this.opened.set(spec.name, opening);
      opening.catch(() => this.opened.delete(spec.name));
    }
    return opening as unknown as Promise<Collection<T>>;
  }

  async dropIndex(collection: string, index: string): Promise<void> {
    try {
      await connectionDb(this.connection).collection(collection).dropIndex(index);
    } catch (err) {
      if (!/not found|ns not found|index not found|can't find index/i.test((err as Error).message)) throw err;
    }
  }

  blobs(bucket: string): GridFsBlobStore {
    return new GridFsBlobStore(this.connection, bucket);
  }

  async buckets(): Promise<string[]> {
    const names = (await connectionDb(this.connection).listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    return names
      .filter((n) => n.endsWith('.files'))
      .map((n) => n.slice(0, -'.files'.length))
      .sort();
  }

  async stats(): Promise<CollectionStats[]> {
    const db = connectionDb(this.connection);
    const out: CollectionStats[] = [];
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      const c = db.collection(name);
      const documents = await c.countDocuments({});
      let bytes = 0;
      try {
        const [s] = await c.aggregate<{ b: number }>([{ $group: { _id: null, b: { $sum: { $bsonSize: '$$ROOT' } } } }]).toArray();
        bytes = s?.b ?? 0;
      } catch {
        bytes = 0; // servers without $bsonSize (the MongoDB-wire test server)
      }
      out.push({ name, documents, bytes });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  async ping(): Promise<void> {
    const db = this.connection.db;
    if (!db || this.connection.readyState !== 1) throw new Error('not connected to MongoDB');
    await db.command({ ping: 1 });
  }

  /** The connection belongs to whoever opened it (the core's storage closes it). */
  async close(): Promise<void> {}

  private async open(spec: CollectionSpec): Promise<MongoDocCollection<Doc>> {
    const c = connectionDb(this.connection).collection(spec.name);
    for (const index of spec.indexes) {
      const keys = Object.fromEntries(index.fields.map((f) => [f, 1 as const]));
      if (index.unique) {
        await c.createIndex(keys, { unique: true, sparse: true, name: index.name });
        continue;
      }
      try {
        await c.createIndex(keys, { name: index.name });
      } catch (err) {
        this.logger?.warn({ err, collection: spec.name, index: index.name }, 'store index not created; continuing without it');
      }
    }
    return new MongoDocCollection<Doc>(c, spec.name);
  }
}
