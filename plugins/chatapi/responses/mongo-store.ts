/**
 * Stored responses in MongoDB, for gateways that share one database: one document per response, the
 * JSON parts as text (they are read back whole, never queried) with their bytes, and `expiresAt` with
 * a TTL index so MongoDB removes them after the retention; reads and counts also check `expiresAt`,
 * because the TTL monitor runs only once a minute (and the MongoDB-wire test server has none).
 * Each account keeps at most `maxPerAccount`: a write past it removes that account's oldest.
 */
import type { Connection } from 'mongoose';
import type { ResponseStore, ResponseStoreLimits, StoredResponse } from './store.js';

const COLLECTION = 'chatResponses';

interface ResponseDoc {
  _id: string;
  ownerId: number;
  createdAt: number;
  expiresAt: Date;
  /** The UTF-8 bytes of the three JSON parts: what the storage quota counts. */
  bytes: number;
  response: string;
  inputItems: string;
  conversation: string;
}

export class MongoResponseStore implements ResponseStore {
  readonly #connection: Connection;
  readonly #limits: ResponseStoreLimits;

  private constructor(connection: Connection, limits: ResponseStoreLimits) {
    this.#connection = connection;
    this.#limits = limits;
  }

  static async open(
    connection: Connection,
    limits: ResponseStoreLimits,
    warn: (message: string, err: unknown) => void,
  ): Promise<MongoResponseStore> {
    const store = new MongoResponseStore(connection, limits);
    const collection = store.#collection();
    try {
      await collection.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
    } catch (err) {
      warn('stored responses: TTL index not created; expired responses stay until deleted', err);
    }
    // Per-account counts, sums and the oldest-first eviction read this index.
    await collection.createIndex({ ownerId: 1, createdAt: 1 });
    return store;
  }

  #collection() {
    const db = this.#connection.db;
    if (!db) throw new Error('MongoDB connection is not open');
    return db.collection<ResponseDoc>(COLLECTION);
  }

  async put(record: StoredResponse): Promise<void> {
    const response = JSON.stringify(record.response);
    const inputItems = JSON.stringify(record.inputItems);
    const conversation = JSON.stringify(record.conversation);
    const collection = this.#collection();
    await collection.insertOne({
      _id: record.id,
      ownerId: record.ownerId,
      createdAt: record.createdAt,
      expiresAt: new Date(record.createdAt + this.#limits.retentionMs),
      bytes: Buffer.byteLength(response) + Buffer.byteLength(inputItems) + Buffer.byteLength(conversation),
      response,
      inputItems,
      conversation,
    });
    await this.#evictBeyondBound(record.ownerId);
  }

  /** Removes the owner's oldest documents past `maxPerAccount` (only the owner's: never another account's). */
  async #evictBeyondBound(ownerId: number): Promise<void> {
    const collection = this.#collection();
    const excess = (await collection.countDocuments({ ownerId })) - this.#limits.maxPerAccount;
    if (excess <= 0) return;
    const oldest = await collection
      .find({ ownerId }, { projection: { _id: 1 } })
      .sort({ createdAt: 1, _id: 1 })
      .limit(excess)
      .toArray();
    await collection.deleteMany({ ownerId, _id: { $in: oldest.map((d) => d._id) } });
  }

  async get(id: string): Promise<StoredResponse | null> {
    const doc = await this.#collection().findOne({ _id: id, expiresAt: { $gt: new Date() } });
    if (!doc) return null;
    return {
      id: doc._id,
      ownerId: doc.ownerId,
      createdAt: doc.createdAt,
      response: JSON.parse(doc.response),
      inputItems: JSON.parse(doc.inputItems),
      conversation: JSON.parse(doc.conversation),
    };
  }

  async delete(id: string): Promise<boolean> {
    const { deletedCount } = await this.#collection().deleteOne({ _id: id });
    return deletedCount === 1;
  }

  async storedBytes(ownerId: number): Promise<number> {
    const [sum] = await this.#collection()
      .aggregate<{ bytes: number }>([
        { $match: { ownerId, expiresAt: { $gt: new Date() } } },
        { $group: { _id: null, bytes: { $sum: '$bytes' } } },
      ])
      .toArray();
    return sum?.bytes ?? 0;
  }

  /** The connection is the core's (opened once for every store); it closes it. */
  async close(): Promise<void> {}
}
