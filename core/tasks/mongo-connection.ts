/**
 * One mongoose connection of its own (never the global `mongoose.connection`), so several stores and
 * test "gateway processes" can coexist in one process. Later stores (datasets, fitting jobs, derived
 * services) are meant to share the same connection: open it once, hand it to each store, close it once.
 *
 * No `serverApi`: the MongoDB-wire test server (mongo-java-server) answers only the legacy handshake.
 * No transactions either: every store transition is a single conditional document update.
 */
import type { Connection, mongo } from 'mongoose';
import { BootError } from '../errors.js';
import type { Logger } from '../observe/logger.js';

export interface MongoConnectionOptions {
  serverSelectionTimeoutMS?: number;
}

export async function openMongoConnection(uri: string, logger?: Logger, options: MongoConnectionOptions = {}): Promise<Connection> {
  // Loaded only here: mongoose and its driver cost every other gateway 0.3 s of start-up, 34 MB of
  // RSS and 10 MB of heap (the BSON serializer alone keeps an 18 MB buffer).
  const { default: mongoose } = await import('mongoose');
  const connection = mongoose.createConnection(uri, {
    // Indexes are created explicitly by the store port's MongoDB home (core/storage/mongo-docs.ts).
    autoIndex: false,
    autoCreate: false,
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000,
  });
  try {
    await connection.asPromise();
  } catch (err) {
    await connection.close().catch(() => undefined);
    // A boot-time failure the operator fixes outside the gateway: one coded line, no driver stack.
    throw new BootError('STORE_UNREACHABLE', `cannot connect to MongoDB at ${redactUri(uri)}: ${(err as Error).message}`, [], err);
  }
  logger?.info({ host: connection.host, port: connection.port, db: connection.name }, 'MongoDB connection open');
  return connection;
}

/** The URI without its password, for messages. */
function redactUri(uri: string): string {
  return uri.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

/** The driver database of an open connection. */
export function connectionDb(connection: Connection): mongo.Db {
  const db = connection.db;
  if (!db) throw new Error('MongoDB connection is not open');
  return db;
}

/** MongoDB's duplicate-key error (a unique index refused the write). */
export function isDuplicateKeyError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}
