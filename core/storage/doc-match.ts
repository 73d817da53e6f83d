/**
 * The port's filter, update and sort rules evaluated in JavaScript: the memory home runs queries with
 * them, and the embedded home applies updates with them inside its write transaction, so both read
 * the port the same way (MongoDB evaluates the same filters natively).
 */
import type { Doc, DocValue, FieldCondition, Filter, Scalar, SortSpec, Update } from './port.js';

export function getPath(doc: unknown, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const isCondition = (value: unknown): value is FieldCondition =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).some((k) => k.startsWith('$'));

const same = (a: unknown, b: Scalar): boolean => (b === null ? a === null || a === undefined : a === b);

function compare(a: unknown, b: number | string, ok: (c: number) => boolean): boolean {
  if (typeof a !== typeof b) return false;
  return ok(a === b ? 0 : (a as number | string) < b ? -1 : 1);
}

function holds(value: unknown, cond: Scalar | FieldCondition): boolean {
  if (!isCondition(cond)) return same(value, cond);
  if (cond.$exists !== undefined && (value !== undefined) !== cond.$exists) return false;
  if (cond.$in && !cond.$in.some((v) => same(value, v))) return false;
  if (cond.$nin && cond.$nin.some((v) => same(value, v))) return false;
  if (cond.$ne !== undefined && same(value, cond.$ne)) return false;
  if (cond.$lt !== undefined && !compare(value, cond.$lt, (c) => c < 0)) return false;
  if (cond.$lte !== undefined && !compare(value, cond.$lte, (c) => c <= 0)) return false;
  if (cond.$gt !== undefined && !compare(value, cond.$gt, (c) => c > 0)) return false;
  if (cond.$gte !== undefined && !compare(value, cond.$gte, (c) => c >= 0)) return false;
  return true;
}

export function matches(doc: Doc, filter: Filter): boolean {
  for (const [path, cond] of Object.entries(filter)) {
    if (cond === undefined) continue;
    if (path === '$or') {
      if (!(cond as readonly Filter[]).some((f) => matches(doc, f))) return false;
    } else if (!holds(getPath(doc, path), cond as Scalar | FieldCondition)) return false;
  }
  return true;
}

/**
 * `target[key] = value` as a plain own property, for a copy of caller data: its "__proto__" key
 * (JSON.parse makes one a plain property) assigned would set the copy's prototype to the caller's
 * object and drop the key.
 */
export function setEntry(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A deep copy (Buffers copied too), so no caller shares memory with what a home keeps. */
export function cloneDoc<T>(value: T): T {
  if (Buffer.isBuffer(value)) return Buffer.from(value) as T;
  if (Array.isArray(value)) return value.map(cloneDoc) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) setEntry(out, k, cloneDoc(v));
    return out as T;
  }
  return value;
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = doc;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    at = at[part] =
      next && typeof next === 'object' && !Buffer.isBuffer(next) && !Array.isArray(next) ? { ...(next as Record<string, unknown>) } : {};
  }
  const last = parts[parts.length - 1]!;
  if (value === undefined) delete at[last];
  else at[last] = value;
}

/** The document after `update` (a new object; `doc` is left as it was). */
export function applyUpdate<T extends Doc>(doc: T, update: Update, inserting = false): T {
  const next = { ...doc } as Record<string, unknown>;
  if (inserting) for (const [k, v] of Object.entries(update.$setOnInsert ?? {})) setPath(next, k, cloneDoc(v));
  for (const [k, v] of Object.entries(update.$set ?? {})) setPath(next, k, cloneDoc(v));
  for (const k of update.$unset ?? []) setPath(next, k, undefined);
  for (const [k, by] of Object.entries(update.$inc ?? {})) {
    const current = getPath(next, k);
    setPath(next, k, (typeof current === 'number' ? current : 0) + by);
  }
  return next as T;
}

/** What an upsert inserts: the filter's equality fields (top level), then the update. */
export function upsertDoc<T extends Doc>(filter: Filter, update: Update): T {
  const base: Record<string, DocValue> = {};
  for (const [k, v] of Object.entries(filter)) {
    if (k !== '$or' && !k.includes('.') && (v === null || typeof v !== 'object')) base[k] = v as Scalar;
  }
  if (typeof base._id !== 'string' && typeof base._id !== 'number') throw new Error('an upsert needs the _id in its filter');
  return applyUpdate(base as unknown as T, update, true);
}

function rank(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number') return 1;
  if (typeof value === 'string') return 2;
  return 3;
}

/** Orders by the sort fields (absent and null first, as MongoDB does), then `_id`. */
export function sortComparator(sort: SortSpec | undefined): (a: Doc, b: Doc) => number {
  const keys = Object.entries(sort ?? {});
  return (a, b) => {
    for (const [path, dir] of keys) {
      const x = getPath(a, path);
      const y = getPath(b, path);
      const c =
        rank(x) - rank(y) || (x === y || rank(x) === 0 || rank(x) === 3 ? 0 : (x as number | string) < (y as number | string) ? -1 : 1);
      if (c !== 0) return c * dir;
    }
    return a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
  };
}

/** Values of a unique index's fields, or null when the document lacks one (sparse: not indexed). */
export function indexKey(doc: Doc, fields: readonly string[]): string | null {
  const values: unknown[] = [];
  for (const f of fields) {
    const v = getPath(doc, f);
    if (v === undefined) return null;
    values.push(v);
  }
  return JSON.stringify(values);
}
