/**
 * The embedded home of the store port: one SQLite database file under `store.dataDir`
 * (`@photostructure/sqlite`, the `node:sqlite` API with SQLite built in, shipped in its npm package;
 * docs/storage.md says why). Each collection is a table of JSON documents; declared indexes are SQLite
 * expression indexes on `json_extract`, unique ones are sparse (SQLite never counts NULLs as equal).
 *
 * Durability and processes: WAL journal, so a write acknowledged by a committed transaction is in the
 * file even when the process is killed (-9) the next instant; several worker processes open the same
 * file, and every write that reads first (`findOneAndUpdate`, `updateMany`) runs in a `BEGIN IMMEDIATE`
 * transaction, which holds SQLite's single write lock: the compare-and-set is atomic across processes.
 * A writer waits for the lock at most `BUSY_TIMEOUT_MS`; transactions are a few statements long.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type DatabaseSyncInstance } from '@photostructure/sqlite';
import { applyUpdate, sortComparator, upsertDoc } from './doc-match.js';
import { decodeDoc as decode, encodeDoc as encode } from './doc-json.js';
import { StatementCache } from './sqlite-statements.js';
import {
  DuplicateKeyError,
  type BlobRead,
  type BlobStore,
  type Collection,
  type CollectionSpec,
  type CollectionStats,
  type Doc,
  type DocStore,
  type FieldCondition,
  type Filter,
  type FindOneAndUpdateOptions,
  type FindOptions,
  type Scalar,
  type SortSpec,
  type Update,
} from './port.js';

export const EMBEDDED_DB_FILE = 'gateway.sqlite';
const BUSY_TIMEOUT_MS = 10_000;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

type Param = string | number | null | Uint8Array;
type Row = Record<string, unknown>;

function fieldExpr(path: string): string {
  if (path === '_id') return 'id';
  if (!PATH.test(path)) throw new Error(`store: field path not allowed: ${path}`);
  return `json_extract(doc,'$.${path}')`;
}

const param = (v: Scalar): Param => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

function inList(expr: string, values: readonly Scalar[], params: Param[]): string {
  const present = values.filter((v) => v !== null);
  const parts: string[] = [];
  if (present.length) {
    parts.push(`${expr} IN (${present.map(() => '?').join(',')})`);
    params.push(...present.map(param));
  }
  if (present.length !== values.length) parts.push(`${expr} IS NULL`);
  return parts.length ? `(${parts.join(' OR ')})` : '0';
}

function conditionSql(path: string, cond: Scalar | FieldCondition, params: Param[]): string {
  const expr = fieldExpr(path);
  if (cond === null) return `${expr} IS NULL`;
  if (typeof cond !== 'object') {
    params.push(param(cond));
    return `${expr} = ?`;
  }
  const parts: string[] = [];
  if (cond.$exists !== undefined) {
    const typeExpr = path === '_id' ? 'id' : `json_type(doc,'$.${path}')`;
    parts.push(`${typeExpr} IS ${cond.$exists ? 'NOT ' : ''}NULL`);
  }
  if (cond.$in) parts.push(inList(expr, cond.$in, params));
  if (cond.$nin) {
    // As MongoDB: a missing field is in no list but one naming null (SQL's NOT IN would drop it).
    const listed = inList(expr, cond.$nin, params);
    parts.push(listed === '0' ? '1' : cond.$nin.includes(null) ? `NOT ${listed}` : `(${expr} IS NULL OR NOT ${listed})`);
  }
  if (cond.$ne !== undefined) {
    if (cond.$ne === null) parts.push(`${expr} IS NOT NULL`);
    else {
      parts.push(`(${expr} IS NULL OR ${expr} != ?)`);
      params.push(param(cond.$ne));
    }
  }
  for (const [op, sql] of [
    ['$lt', '<'],
    ['$lte', '<='],
    ['$gt', '>'],
    ['$gte', '>='],
  ] as const) {
    const v = cond[op];
    if (v === undefined) continue;
    parts.push(`${expr} ${sql} ?`);
    params.push(v);
  }
  return parts.length ? parts.join(' AND ') : '1';
}

export function filterSql(filter: Filter, params: Param[]): string {
  const parts: string[] = [];
  for (const [path, cond] of Object.entries(filter)) {
    if (cond === undefined) continue;
    if (path === '$or') {
      const ors = (cond as readonly Filter[]).map((f) => `(${filterSql(f, params)})`);
      parts.push(ors.length ? `(${ors.join(' OR ')})` : '0');
    } else parts.push(conditionSql(path, cond as Scalar | FieldCondition, params));
  }
  return parts.length ? parts.join(' AND ') : '1';
}

/** Sorts read `_id` from the document: the key column is text, which would order 10 before 9. */
const sortExpr = (path: string): string => (path === '_id' ? "json_extract(doc,'$._id')" : fieldExpr(path));

function orderSql(sort: SortSpec | undefined): string {
  const keys = Object.entries(sort ?? {}).map(([p, dir]) => `${sortExpr(p)} ${dir === -1 ? 'DESC' : 'ASC'}`);
  if (!('_id' in (sort ?? {}))) keys.push(`${sortExpr('_id')} ASC`);
  return ` ORDER BY ${keys.join(', ')}`;
}

function isUniqueViolation(err: unknown): boolean {
  return /UNIQUE constraint failed|PRIMARY KEY constraint failed/.test((err as Error)?.message ?? '');
}

/** The port's error for SQLite's: the index by its name in the collection's spec (`_id` for the key). */
function duplicateKey(collection: string, err: unknown): DuplicateKeyError {
  const index = new RegExp(`index '"?c_${collection}__([^'"]+)"?'`).exec((err as Error).message)?.[1];
  return new DuplicateKeyError(collection, index ?? '_id');
}

class SqliteCollection<T extends Doc> implements Collection<T> {
  private readonly table: string;

  constructor(
    private readonly db: DatabaseSyncInstance,
    private readonly statements: StatementCache,
    readonly name: string,
  ) {
    this.table = `"c_${name}"`;
  }

  async get(id: T['_id']): Promise<T | null> {
    const row = this.statements.prepare(`SELECT doc FROM ${this.table} WHERE id = ?`).get(id) as Row | undefined;
    return row ? decode<T>(row.doc as string) : null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    return this.select(filter, options);
  }

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    const [doc] = this.select(filter, { ...options, limit: 1 });
    return doc ?? null;
  }

  async count(filter: Filter): Promise<number> {
    const params: Param[] = [];
    const row = this.statements.prepare(`SELECT count(*) AS n FROM ${this.table} WHERE ${filterSql(filter, params)}`).get(...params) as Row;
    return Number(row.n);
  }

  async sum(filter: Filter, paths: readonly string[]): Promise<number[]> {
    if (paths.length === 0) return [];
    const params: Param[] = [];
    const where = filterSql(filter, params);
    const cols = paths.map((p, i) => `total(${fieldExpr(p)}) AS s${i}`).join(', ');
    const row = this.statements.prepare(`SELECT ${cols} FROM ${this.table} WHERE ${where}`).get(...params) as Row;
    return paths.map((_, i) => Number(row[`s${i}`] ?? 0));
  }

  async insert(doc: T): Promise<void> {
    this.insertNow(doc);
  }

  async findOneAndUpdate(filter: Filter, update: Update, options: FindOneAndUpdateOptions = {}): Promise<T | null> {
    return this.write(() => {
      const [before] = this.select(filter, { sort: options.sort, limit: 1 });
      if (!before) {
        if (!options.upsert) return null;
        const doc = upsertDoc<T>(filter, update);
        this.insertNow(doc);
        return options.returnDocument === 'before' ? null : doc;
      }
      const after = applyUpdate(before, update);
      this.replace(after);
      return options.returnDocument === 'before' ? before : after;
    });
  }

  async updateMany(filter: Filter, update: Update): Promise<number> {
    return this.write(() => {
      const docs = this.select(filter, {});
      for (const doc of docs) this.replace(applyUpdate(doc, update));
      return docs.length;
    });
  }

  async deleteMany(filter: Filter): Promise<number> {
    const params: Param[] = [];
    const res = this.statements.prepare(`DELETE FROM ${this.table} WHERE ${filterSql(filter, params)}`).run(...params);
    return Number(res.changes);
  }

  /** The documents `filter` matches, in the sort's order, within the limit. */
  private select(filter: Filter, options: FindOptions): T[] {
    if (filter.$or && filter.$or.length > 1 && options.sort && options.limit !== undefined)
      return this.selectBranches(filter, options.sort, options.limit, options.skip ?? 0);
    const params: Param[] = [];
    let sql = `SELECT doc FROM ${this.table} WHERE ${filterSql(filter, params)}${orderSql(options.sort)}`;
    if (options.limit !== undefined || options.skip !== undefined) {
      sql += ' LIMIT ? OFFSET ?';
      params.push(options.limit ?? -1, options.skip ?? 0);
    }
    return this.decodeRows(this.statements.prepare(sql).all(...params) as Row[]);
  }

  /**
   * A sorted, limited `$or`: each branch sorted and limited on its own, then merged here (as MongoDB's
   * SORT_MERGE does). As one query SQLite reads an `$or` through an index per branch and then sorts
   * every match in a temporary B-tree: each claim of an async task sorted all the queued tasks to take
   * the oldest (1.1 ms a claim with 2,000 queued). A branch alone walks its index in the sort's order
   * and stops at the limit. A document two branches match is kept once; the merge orders as the
   * memory home does, which the port's tests hold to SQLite's order.
   */
  private selectBranches(filter: Filter, sort: SortSpec, limit: number, skip: number): T[] {
    const { $or: branches = [], ...rest } = filter;
    const docs = new Map<T['_id'], T>();
    for (const branch of branches) {
      const params: Param[] = [];
      const where = `(${filterSql(rest, params)}) AND (${filterSql(branch, params)})`;
      const sql = `SELECT doc FROM ${this.table} WHERE ${where}${orderSql(sort)} LIMIT ?`;
      for (const doc of this.decodeRows(this.statements.prepare(sql).all(...params, limit + skip) as Row[])) docs.set(doc._id, doc);
    }
    return [...docs.values()].sort(sortComparator(sort)).slice(skip, skip + limit);
  }

  private decodeRows(rows: Row[]): T[] {
    return rows.map((row) => decode<T>(row.doc as string));
  }

  private insertNow(doc: T): void {
    try {
      this.statements.prepare(`INSERT INTO ${this.table} (id, doc) VALUES (?, ?)`).run(doc._id, encode(doc));
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateKey(this.name, err);
      throw err;
    }
  }

  private replace(doc: T): void {
    try {
      this.statements.prepare(`UPDATE ${this.table} SET doc = ? WHERE id = ?`).run(encode(doc), doc._id);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateKey(this.name, err);
      throw err;
    }
  }

  /** Runs `fn` holding the database's write lock (BEGIN IMMEDIATE), so its read and write are one step. */
  private write<R>(fn: () => R): R {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const out = fn();
      this.db.exec('COMMIT');
      return out;
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }
}

class SqliteBlobStore implements BlobStore {
  constructor(
    private readonly statements: StatementCache,
    private readonly bucket: string,
  ) {}

  async put(_name: string, data: Buffer, metadata: Record<string, string>): Promise<string> {
    const ref = randomUUID();
    this.statements
      .prepare('INSERT INTO _blobs (ref, bucket, metadata, data, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(ref, this.bucket, JSON.stringify(metadata), data, Date.now());
    return ref;
  }

  async read(ref: string): Promise<BlobRead> {
    const row = this.statements.prepare('SELECT data FROM _blobs WHERE ref = ? AND bucket = ?').get(ref, this.bucket) as Row | undefined;
    if (!row) return { kind: 'missing' };
    const data = row.data;
    return data instanceof Uint8Array ? { kind: 'ok', data: Buffer.from(data) } : { kind: 'corrupted' };
  }

  async delete(ref: string): Promise<void> {
    this.statements.prepare('DELETE FROM _blobs WHERE ref = ? AND bucket = ?').run(ref, this.bucket);
  }

  async listBefore(before: number, limit: number): Promise<Array<{ ref: string; metadata: Record<string, string> }>> {
    const rows = this.statements
      .prepare('SELECT ref, metadata FROM _blobs WHERE bucket = ? AND created_at < ? ORDER BY created_at LIMIT ?')
      .all(this.bucket, before, limit) as Row[];
    return rows.map((r) => ({ ref: r.ref as string, metadata: JSON.parse(r.metadata as string) as Record<string, string> }));
  }

  /** Overwrites a blob's bytes (tests damage one to see it read as corrupted). */
  overwrite(ref: string, data: Buffer): void {
    this.statements.prepare('UPDATE _blobs SET data = ? WHERE ref = ?').run(data, ref);
  }
}

export class SqliteDocStore implements DocStore {
  readonly home = 'embedded' as const;
  readonly path: string;
  readonly db: DatabaseSyncInstance;
  readonly #statements: StatementCache;
  private readonly opened = new Map<string, SqliteCollection<Doc>>();

  /** Opens (creating if needed) `<dataDir>/gateway.sqlite`. */
  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, EMBEDDED_DB_FILE);
    this.db = new DatabaseSync(this.path, { timeout: BUSY_TIMEOUT_MS });
    this.#statements = new StatementCache(this.db);
    // WAL: readers never wait for the writer, and a committed write is on disk (in the WAL) at once.
    // synchronous=NORMAL: no fsync per commit; a killed process loses nothing, a power cut may lose the last commits.
    this.db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL');
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS _blobs (ref TEXT PRIMARY KEY, bucket TEXT NOT NULL, metadata TEXT NOT NULL, data BLOB NOT NULL, created_at INTEGER NOT NULL);' +
        'CREATE INDEX IF NOT EXISTS _blobs_age ON _blobs(bucket, created_at)',
    );
  }

  async collection<T extends Doc>(spec: CollectionSpec): Promise<Collection<T>> {
    const known = this.opened.get(spec.name);
    if (known) return known as unknown as Collection<T>;
    if (!NAME.test(spec.name)) throw new Error(`store: collection name not allowed: ${spec.name}`);
    const table = `"c_${spec.name}"`;
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, doc TEXT NOT NULL)`);
    for (const index of spec.indexes) {
      if (!NAME.test(index.name)) throw new Error(`store: index name not allowed: ${index.name}`);
      const cols = index.fields.map(fieldExpr).join(', ');
      this.db.exec(`CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "c_${spec.name}__${index.name}" ON ${table}(${cols})`);
    }
    const collection = new SqliteCollection<Doc>(this.db, this.#statements, spec.name);
    this.opened.set(spec.name, collection);
    return collection as unknown as Collection<T>;
  }

  async dropIndex(collection: string, index: string): Promise<void> {
    if (!NAME.test(collection) || !NAME.test(index)) return;
    this.db.exec(`DROP INDEX IF EXISTS "c_${collection}__${index}"`);
  }

  blobs(bucket: string): SqliteBlobStore {
    return new SqliteBlobStore(this.#statements, bucket);
  }

  async buckets(): Promise<string[]> {
    return (this.#statements.prepare('SELECT DISTINCT bucket FROM _blobs ORDER BY bucket').all() as Row[]).map((r) => String(r.bucket));
  }

  async stats(): Promise<CollectionStats[]> {
    const tables = this.#statements
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'c\\_%' ESCAPE '\\' ORDER BY name")
      .all() as Row[];
    const out: CollectionStats[] = [];
    for (const { name } of tables) {
      const row = this.#statements.prepare(`SELECT count(*) AS n, total(length(doc)) AS b FROM "${String(name)}"`).get() as Row;
      out.push({ name: String(name).slice(2), documents: Number(row.n), bytes: Number(row.b) });
    }
    const blobs = this.#statements.prepare('SELECT count(*) AS n, total(length(data)) AS b FROM _blobs').get() as Row;
    out.push({ name: '(blobs)', documents: Number(blobs.n), bytes: Number(blobs.b) });
    return out;
  }

  async ping(): Promise<void> {
    this.#statements.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}
