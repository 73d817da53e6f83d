/**
 * The store port: the few operations every domain store (async tasks, fitting, stored responses,
 * usage, shared limits) is written on, once. Three homes implement it: embedded (SQLite files under
 * `store.dataDir`, the default), MongoDB, and memory (tests, `store.kind: memory`). One conformance
 * suite (test/storage/doc-store.conformance.ts) holds every home to the guarantees written here.
 *
 * Documents: plain objects with an `_id` (string or integer), whose values are JSON values or Buffers. They live in
 * named collections, each declared once with its indexes (`CollectionSpec`).
 *
 * Guarantees, on every home:
 * - Every single call is atomic: a concurrent reader sees a document before or after a write, never
 *   part of one. `findOneAndUpdate` picks the document and writes it in one step (compare-and-set:
 *   the filter is the expectation), across every process on the store, so it is the tool for claims,
 *   leases and fencing tokens. `updateMany` and `deleteMany` are atomic per document only.
 * - A unique index refuses a second document with the same values (`DuplicateKeyError`), on insert
 *   and on update, across processes; documents lacking an indexed field are not indexed (sparse), so
 *   a unique field present only in some states ("slots") caps how many documents are in that state.
 * - Acknowledged writes survive the process (embedded: SQLite WAL; MongoDB: its write concern); the
 *   memory home keeps nothing past `close()`.
 * - `find` returns documents in `sort` order (ties in `_id` order); without `sort`, in `_id` order.
 *   Paging: `skip` and `limit`, or a range condition on the last value seen.
 * - No multi-document transactions: a domain store keeps each transition to one document.
 */

/** A value a document may hold. */
export type DocValue = string | number | boolean | null | Buffer | DocValue[] | { [key: string]: DocValue | undefined };

/** A stored document: `_id` is the key (a string, or an integer for numbered records). */
export interface Doc {
  _id: string | number;
}

export type Scalar = string | number | boolean | null;

/** Conditions on one field (a dotted path reaches into sub-documents). */
export interface FieldCondition {
  $in?: readonly Scalar[];
  $nin?: readonly Scalar[];
  $ne?: Scalar;
  $lt?: number | string;
  $lte?: number | string;
  $gt?: number | string;
  $gte?: number | string;
  /** True: the field is present (null counts as present); false: it is absent. */
  $exists?: boolean;
}

/**
 * A query: every field condition holds (a plain value is equality; `null` matches null or absent), and
 * when `$or` is given, at least one of its filters holds too.
 */
export type Filter = { [path: string]: Scalar | FieldCondition | readonly Filter[] | undefined } & { $or?: readonly Filter[] };

/** Field names may be dotted paths into sub-documents (created as needed). */
export interface Update {
  /** Values are `DocValue`s (JSON values and Buffers); undefined removes the field. */
  $set?: Record<string, unknown>;
  /** Applied only when an upsert inserts the document. */
  $setOnInsert?: Record<string, unknown>;
  $unset?: readonly string[];
  /** An absent field counts from 0. */
  $inc?: Record<string, number>;
}

export type SortSpec = Record<string, 1 | -1>;

export interface FindOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
}

export interface FindOneAndUpdateOptions {
  /** Among several matches, the first in this order is written. */
  sort?: SortSpec;
  /** The document as it was before the write, or as written (default). */
  returnDocument?: 'before' | 'after';
  /**
   * No match: insert `{...equality fields of the filter, ...$setOnInsert, ...$set, ...$inc}` (a counter's
   * first use); the filter must name the `_id`, so concurrent upserts make one document.
   */
  upsert?: boolean;
}

export interface IndexSpec {
  name: string;
  /** Dotted paths, ascending. */
  fields: readonly string[];
  /** Sparse unique: documents lacking the field are not indexed. */
  unique?: boolean;
}

export interface CollectionSpec {
  name: string;
  indexes: readonly IndexSpec[];
}

export interface Collection<T extends Doc> {
  readonly name: string;
  get(id: T['_id']): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  findOne(filter: Filter, options?: FindOptions): Promise<T | null>;
  count(filter: Filter): Promise<number>;
  /** Sums numeric fields over the matching documents (absent fields count 0), one total per path. */
  sum(filter: Filter, paths: readonly string[]): Promise<number[]>;
  /** Throws `DuplicateKeyError` when `_id` or a unique index is taken. */
  insert(doc: T): Promise<void>;
  /** The compare-and-set: see the port's guarantees. Null when nothing matched (and no upsert). */
  findOneAndUpdate(filter: Filter, update: Update, options?: FindOneAndUpdateOptions): Promise<T | null>;
  /** Returns how many documents matched. */
  updateMany(filter: Filter, update: Update): Promise<number>;
  /** Returns how many documents were removed. */
  deleteMany(filter: Filter): Promise<number>;
}

/** File storage for payloads too large for a document. */
export interface BlobStore {
  /** Stores `data` and returns a reference to keep in the document. */
  put(name: string, data: Buffer, metadata: Record<string, string>): Promise<string>;
  /** `missing` when there is no such blob; `corrupted` when it exists but cannot be read. */
  read(ref: string): Promise<BlobRead>;
  /** Removes the blob; a missing one is not an error. */
  delete(ref: string): Promise<void>;
  /** Blobs stored before `before` (Unix ms), with their metadata: for sweeps of orphans. */
  listBefore(before: number, limit: number): Promise<Array<{ ref: string; metadata: Record<string, string> }>>;
}

export type BlobRead = { kind: 'ok'; data: Buffer } | { kind: 'missing' } | { kind: 'corrupted' };

export type StoreHome = 'embedded' | 'memory' | 'mongodb';

export interface CollectionStats {
  name: string;
  documents: number;
  bytes: number;
}

export interface DocStore {
  readonly home: StoreHome;
  /** Opens (and on first use creates) a collection with its indexes; the same spec may be opened again. */
  collection<T extends Doc>(spec: CollectionSpec): Promise<Collection<T>>;
  /** Drops an index an older version declared (migrations); a missing one is not an error. */
  dropIndex(collection: string, index: string): Promise<void>;
  /** A named blob store (e.g. a GridFS bucket). */
  blobs(bucket: string): BlobStore;
  /** The names of the blob buckets holding blobs (operator tools). */
  buckets(): Promise<string[]>;
  /** Documents and bytes per collection (operator tools). */
  stats(): Promise<CollectionStats[]>;
  /** Resolves when the store answers (readiness); rejects when it cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A unique index (or `_id`) refused the write. */
export class DuplicateKeyError extends Error {
  constructor(
    readonly collection: string,
    readonly index: string,
  ) {
    super(`duplicate key in ${collection} (${index})`);
    this.name = 'DuplicateKeyError';
  }
}

export const isDuplicateKey = (err: unknown): err is DuplicateKeyError => err instanceof DuplicateKeyError;
