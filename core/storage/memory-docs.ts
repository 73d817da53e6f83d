/**
 * The memory home of the store port: documents and blobs in this process, gone at `close()` or exit.
 * For tests and `store.kind: memory`. Each call runs synchronously between awaits, so each is atomic.
 */
import { randomUUID } from 'node:crypto';
import { applyUpdate, cloneDoc, getPath, indexKey, matches, sortComparator, upsertDoc } from './doc-match.js';
import {
  DuplicateKeyError,
  type BlobRead,
  type BlobStore,
  type Collection,
  type CollectionSpec,
  type CollectionStats,
  type Doc,
  type DocStore,
  type Filter,
  type FindOneAndUpdateOptions,
  type FindOptions,
  type IndexSpec,
  type Update,
} from './port.js';

/** A value an equality lookup can find (null and missing fields match each other, so are not looked up). */
type Key = string | number | boolean;
const isKey = (value: unknown): value is Key => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/**
 * One collection. A unique index is a map from its key to the document holding it, so a write checks it
 * with a lookup. The first field of each declared index maps its values to the documents holding them,
 * so a filter with an equality (or `$in`) on such a field, or on `_id`, reads only those documents; a
 * claim's `$or` of two such branches reads both. Any other filter scans the collection. Every candidate
 * is still matched against the whole filter.
 */
class MemoryCollection<T extends Doc> implements Collection<T> {
  readonly docs = new Map<T['_id'], T>();
  private readonly unique: Array<{ index: IndexSpec; owners: Map<string, T['_id']> }>;
  private readonly byValue = new Map<string, Map<Key, Set<T>>>();

  constructor(
    readonly name: string,
    indexes: readonly IndexSpec[],
  ) {
    this.unique = indexes.filter((i) => i.unique).map((index) => ({ index, owners: new Map() }));
    for (const { fields } of indexes) if (fields[0] !== undefined) this.byValue.set(fields[0], new Map());
  }

  async get(id: T['_id']): Promise<T | null> {
    const doc = this.docs.get(id);
    return doc ? cloneDoc(doc) : null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    return this.select(filter, options).map(cloneDoc);
  }

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    const [doc] = this.select(filter, { ...options, limit: 1 });
    return doc ? cloneDoc(doc) : null;
  }

  async count(filter: Filter): Promise<number> {
    return this.select(filter, {}).length;
  }

  async sum(filter: Filter, paths: readonly string[]): Promise<number[]> {
    const totals = paths.map(() => 0);
    for (const doc of this.select(filter, {})) {
      paths.forEach((p, i) => {
        const v = getPath(doc, p);
        if (typeof v === 'number') totals[i]! += v;
      });
    }
    return totals;
  }

  async insert(doc: T): Promise<void> {
    if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, '_id');
    const copy = cloneDoc(doc);
    this.checkUnique(copy);
    this.keep(copy);
  }

  async findOneAndUpdate(filter: Filter, update: Update, options: FindOneAndUpdateOptions = {}): Promise<T | null> {
    const [before] = this.select(filter, { sort: options.sort, limit: 1 });
    if (!before) {
      if (!options.upsert) return null;
      const doc = upsertDoc<T>(filter, update);
      await this.insert(doc);
      return options.returnDocument === 'before' ? null : cloneDoc(doc);
    }
    const after = applyUpdate(before, update);
    this.checkUnique(after);
    this.keep(after);
    return cloneDoc(options.returnDocument === 'before' ? before : after);
  }

  async updateMany(filter: Filter, update: Update): Promise<number> {
    const hits = this.select(filter, {});
    for (const doc of hits) {
      const after = applyUpdate(doc, update);
      this.checkUnique(after);
      this.keep(after);
    }
    return hits.length;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const hits = this.select(filter, {});
    for (const doc of hits) {
      this.unindex(doc);
      this.docs.delete(doc._id);
    }
    return hits.length;
  }

  private select(filter: Filter, options: FindOptions): T[] {
    const hits: T[] = [];
    // The documents the filter's lookups find (the fewest), else all.
    for (const doc of this.lookup(filter) ?? this.docs.values()) if (matches(doc, filter)) hits.push(doc);
    const order = sortComparator(options.sort);
    const from = options.skip ?? 0;
    // The first in order is one pass, not a sort (a claim's oldest queued task, a findOne).
    if (options.limit === 1 && from === 0) return hits.length ? [hits.reduce((min, d) => (order(d, min) < 0 ? d : min))] : [];
    hits.sort(order);
    return hits.slice(from, options.limit === undefined ? undefined : from + options.limit);
  }

  /** The documents holding the values the filter asks for on a looked-up field; undefined when it asks for none. */
  private lookup(filter: Filter): ReadonlySet<T> | undefined {
    let fewest: ReadonlySet<T> | undefined;
    const consider = (found: ReadonlySet<T> | undefined) => {
      if (found && (!fewest || found.size < fewest.size)) fewest = found;
    };
    for (const [path, cond] of Object.entries(filter)) {
      if (path === '$or') {
        const branches = (cond as readonly Filter[]).map((branch) => this.lookup(branch));
        if (branches.every((found) => found !== undefined)) consider(union(branches as Array<ReadonlySet<T>>));
        continue;
      }
      const values = wantedValues(cond);
      if (!values) continue;
      if (path === '_id') {
        consider(new Set(values.flatMap((v) => this.docs.get(v as T['_id']) ?? [])));
        continue;
      }
      const index = this.byValue.get(path);
      if (index) consider(values.length === 1 ? (index.get(values[0]!) ?? EMPTY) : union(values.map((v) => index.get(v) ?? EMPTY)));
    }
    return fewest;
  }

  private checkUnique(doc: T): void {
    for (const { index, owners } of this.unique) {
      const key = indexKey(doc, index.fields);
      if (key === null) continue;
      const owner = owners.get(key);
      if (owner !== undefined && owner !== doc._id) throw new DuplicateKeyError(this.name, index.name);
    }
  }

  /** Stores a checked document, in place of the one with its `_id`, with its unique keys and looked-up values. */
  private keep(doc: T): void {
    const before = this.docs.get(doc._id);
    if (before) this.unindex(before);
    this.docs.set(doc._id, doc);
    for (const { index, owners } of this.unique) {
      const key = indexKey(doc, index.fields);
      if (key !== null) owners.set(key, doc._id);
    }
    for (const [path, index] of this.byValue) {
      const value = getPath(doc, path);
      if (!isKey(value)) continue;
      let holders = index.get(value);
      if (!holders) index.set(value, (holders = new Set()));
      holders.add(doc);
    }
  }

  private unindex(doc: T): void {
    for (const { index, owners } of this.unique) {
      const key = indexKey(doc, index.fields);
      if (key !== null && owners.get(key) === doc._id) owners.delete(key);
    }
    for (const [path, index] of this.byValue) {
      const value = getPath(doc, path);
      const holders = isKey(value) ? index.get(value) : undefined;
      if (holders?.delete(doc) && holders.size === 0) index.delete(value as Key);
    }
  }
}

const EMPTY: ReadonlySet<never> = new Set();

function union<T>(parts: Iterable<Iterable<T>>): Set<T> {
  const all = new Set<T>();
  for (const part of parts) for (const item of part) all.add(item);
  return all;
}

/** The values an equality or an `$in` asks a field for; undefined for any other condition, or one that null can meet. */
function wantedValues(cond: unknown): Key[] | undefined {
  if (isKey(cond)) return [cond];
  const list = cond && typeof cond === 'object' && !Array.isArray(cond) ? (cond as { $in?: unknown }).$in : undefined;
  return Array.isArray(list) && list.every(isKey) ? list : undefined;
}

class MemoryBlobStore implements BlobStore {
  readonly blobs = new Map<string, { data: Buffer; metadata: Record<string, string>; at: number }>();

  async put(_name: string, data: Buffer, metadata: Record<string, string>): Promise<string> {
    const ref = randomUUID();
    this.blobs.set(ref, { data: Buffer.from(data), metadata: { ...metadata }, at: Date.now() });
    return ref;
  }

  async read(ref: string): Promise<BlobRead> {
    const blob = this.blobs.get(ref);
    return blob ? { kind: 'ok', data: Buffer.from(blob.data) } : { kind: 'missing' };
  }

  async delete(ref: string): Promise<void> {
    this.blobs.delete(ref);
  }

  async listBefore(before: number, limit: number): Promise<Array<{ ref: string; metadata: Record<string, string> }>> {
    return [...this.blobs.entries()]
      .filter(([, b]) => b.at < before)
      .slice(0, limit)
      .map(([ref, b]) => ({ ref, metadata: { ...b.metadata } }));
  }
}

export class MemoryDocStore implements DocStore {
  readonly home = 'memory' as const;
  private readonly collections = new Map<string, MemoryCollection<Doc>>();
  private readonly bucketStores = new Map<string, MemoryBlobStore>();

  async collection<T extends Doc>(spec: CollectionSpec): Promise<Collection<T>> {
    let c = this.collections.get(spec.name);
    if (!c) {
      c = new MemoryCollection<Doc>(spec.name, spec.indexes);
      this.collections.set(spec.name, c);
    }
    return c as unknown as Collection<T>;
  }

  async dropIndex(): Promise<void> {
    // Unique rules are read from the spec at each open: nothing is kept to drop.
  }

  /** The blobs of a bucket, kept as given (exposed so tests can damage one). */
  blobs(bucket: string): MemoryBlobStore {
    let b = this.bucketStores.get(bucket);
    if (!b) {
      b = new MemoryBlobStore();
      this.bucketStores.set(bucket, b);
    }
    return b;
  }

  async buckets(): Promise<string[]> {
    return [...this.bucketStores.entries()].filter(([, b]) => b.blobs.size > 0).map(([name]) => name);
  }

  async stats(): Promise<CollectionStats[]> {
    return [...this.collections.values()].map((c) => ({
      name: c.name,
      documents: c.docs.size,
      bytes: [...c.docs.values()].reduce((n, d) => n + JSON.stringify(d).length, 0),
    }));
  }

  async ping(): Promise<void> {
    // Always reachable: it lives in this process.
  }

  async close(): Promise<void> {
    this.collections.clear();
    this.bucketStores.clear();
  }
}
