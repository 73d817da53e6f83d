/**
 * Bodies of requests and results: small ones inline in the task record, large ones in file storage
 * (a `BlobStore` of the store port: GridFS with MongoDB, a table with the embedded store). Each stored payload keeps
 * its size and SHA-256, so a damaged file reads as `corrupted` instead of returning wrong bytes.
 */
import { createHash } from 'node:crypto';
import type { BlobRead, BlobStore } from '../storage/port.js';

export type { BlobRead, BlobStore } from '../storage/port.js';

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
