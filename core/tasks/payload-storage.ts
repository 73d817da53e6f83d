/**
 * Bodies of requests and results: small ones inline in the task record, large ones in file storage
 * (a `BlobStore`: GridFS with MongoDB, a directory with the memory store). Each stored payload keeps
 * its size and SHA-256, so a damaged file reads as `corrupted` instead of returning wrong bytes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, rm, writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

/** File storage for payloads too large for the record. */
export interface BlobStore {
  /** Stores `data` and returns a reference to keep in the record. */
  put(name: string, data: Buffer, metadata: Record<string, string>): Promise<string>;
  /** `missing` when there is no such file; `corrupted` when it exists but cannot be read. */
  read(ref: string): Promise<BlobRead>;
  /** Removes the file; a missing file is not an error. */
  delete(ref: string): Promise<void>;
}

export type BlobRead = { kind: 'ok'; data: Buffer } | { kind: 'missing' } | { kind: 'corrupted' };

/** A payload as kept in a record: exactly one of `inline` and `ref` is set. */
export interface StoredPayload {
  size: number;
  sha256: string;
  inline?: Buffer;
  ref?: string;
}

export const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** Inline when `data.length <= inlineMaxBytes`, else a file in `blobs`. */
export async function storePayload(
  blobs: BlobStore,
  name: string,
  data: Buffer,
  inlineMaxBytes: number,
  metadata: Record<string, string>,
): Promise<StoredPayload> {
  const stored: StoredPayload = { size: data.length, sha256: sha256(data) };
  if (data.length <= inlineMaxBytes) stored.inline = Buffer.from(data);
  else stored.ref = await blobs.put(name, data, metadata);
  return stored;
}

/** Reads a payload back and checks its size and hash. */
export async function loadPayload(blobs: BlobStore, stored: StoredPayload): Promise<BlobRead> {
  let data: Buffer;
  if (stored.inline !== undefined) data = stored.inline;
  else if (stored.ref !== undefined) {
    const read = await blobs.read(stored.ref);
    if (read.kind !== 'ok') return read;
    data = read.data;
  } else return { kind: 'corrupted' };
  if (data.length !== stored.size || sha256(data) !== stored.sha256) return { kind: 'corrupted' };
  return { kind: 'ok', data };
}

/** Removes a payload's file, if it has one. */
export async function deletePayload(blobs: BlobStore, stored: StoredPayload | null | undefined): Promise<void> {
  if (stored?.ref !== undefined) await blobs.delete(stored.ref);
}

/** Files in one directory, named by a random id (never by caller input). */
export class DirectoryBlobStore implements BlobStore {
  private ready: Promise<void> | undefined;

  constructor(readonly dir: string) {}

  async put(_name: string, data: Buffer): Promise<string> {
    this.ready ??= mkdir(this.dir, { recursive: true }).then(() => undefined);
    await this.ready;
    const ref = `${randomUUID()}.bin`;
    const tmp = join(this.dir, `${ref}.tmp`);
    await writeFile(tmp, data);
    await rename(tmp, join(this.dir, ref));
    return ref;
  }

  async read(ref: string): Promise<BlobRead> {
    if (!/^[0-9a-f-]{36}\.bin$/.test(ref)) return { kind: 'corrupted' };
    try {
      return { kind: 'ok', data: await readFile(join(this.dir, ref)) };
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT' ? { kind: 'missing' } : { kind: 'corrupted' };
    }
  }

  async delete(ref: string): Promise<void> {
    if (!/^[0-9a-f-]{36}\.bin$/.test(ref)) return;
    await rm(join(this.dir, ref), { force: true });
  }

  /** The stored files (for tests and diagnostics). */
  async list(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((f) => f.endsWith('.bin'));
    } catch {
      return [];
    }
  }

  /** Removes the directory and everything in it. */
  async destroy(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
