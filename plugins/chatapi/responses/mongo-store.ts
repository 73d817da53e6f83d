/**
 * Stored responses in MongoDB, for gateways that share one database: one document per response, the
 * JSON parts as text (they are read back whole, never queried), and `expiresAt` with a TTL index so
 * MongoDB removes them after the retention; reads also check `expiresAt`, because the TTL monitor runs
 * only once a minute (and the MongoDB-wire test server has none).
 */
import type { Connection } from 'mongoose';
import type { ResponseStore, StoredResponse } from './store.js';

const COLLECTION = 'chatResponses';

interface ResponseDoc {
  _id: string;
  ownerId: number;
  createdAt: number;
  expiresAt: Date;
  response: string;
  inputItems: string;
  conversation: string;
}

export class MongoResponseStore implements ResponseStore {
  readonly #connection: Connection;
  readonly #retentionMs: number;

  private constructor(connection: Connection, retentionMs: number) {
    this.#connection = connection;
    this.#retentionMs = retentionMs;
  }

  static async open(connection: Connection, retentionMs: number, warn: (message: string, err: unknown) => void): Promise<MongoResponseStore> {
    const store = new MongoResponseStore(connection, retentionMs);
    try {
      await store.#collection().createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
    } catch (err) {
      warn('stored responses: TTL index not created; expired responses stay until deleted', err);
    }
    return store;
  }

  #collection() {
    const db = this.#connection.db;
    if (!db) throw new Error('MongoDB connection is not open');
    return db.collection<ResponseDoc>(COLLECTION);
  }

  async put(record: StoredResponse): Promise<void> {
    await this.#collection().insertOne({
      _id: record.id,
      ownerId: record.ownerId,
      createdAt: record.createdAt,
      expiresAt: new Date(record.createdAt + this.#retentionMs),
      response: JSON.stringify(record.response),
      inputItems: JSON.stringify(record.inputItems),
      conversation: JSON.stringify(record.conversation),
    });
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

  /** The connection is the core's (opened once for every store); it closes it. */
  async close(): Promise<void> {}
}
