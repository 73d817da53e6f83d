/** Large task payloads in GridFS (`<bucketName>.files` / `<bucketName>.chunks`). */
import type { Connection, mongo } from 'mongoose';
import type { BlobRead, BlobStore } from '../storage/port.js';
import { connectionDb } from './mongo-connection.js';

export class GridFsBlobStore implements BlobStore {
  readonly bucket: mongo.GridFSBucket;
  /** The driver's ObjectId, from the connection's mongoose: this module loads no driver of its own (mongo-connection.ts says why). */
  readonly #ObjectId: typeof mongo.ObjectId;

  constructor(
    connection: Connection,
    readonly bucketName: string,
  ) {
    const { GridFSBucket, ObjectId } = connection.base.mongo;
    this.bucket = new GridFSBucket(connectionDb(connection), { bucketName });
    this.#ObjectId = ObjectId;
  }

  async put(name: string, data: Buffer, metadata: Record<string, string>): Promise<string> {
    const upload = this.bucket.openUploadStream(name, { metadata });
    await new Promise<void>((resolve, reject) => {
      upload.once('error', reject);
      upload.once('finish', () => resolve());
      upload.end(data);
    });
    return upload.id.toHexString();
  }

  async read(ref: string): Promise<BlobRead> {
    if (!this.#ObjectId.isValid(ref)) return { kind: 'corrupted' };
    const id = new this.#ObjectId(ref);
    const [file] = await this.bucket.find({ _id: id }, { limit: 1 }).toArray();
    if (!file) return { kind: 'missing' };
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of this.bucket.openDownloadStream(id)) chunks.push(chunk as Buffer);
      return { kind: 'ok', data: Buffer.concat(chunks) };
    } catch {
      return { kind: 'corrupted' }; // missing, extra or wrongly sized chunks
    }
  }

  async delete(ref: string): Promise<void> {
    if (!this.#ObjectId.isValid(ref)) return;
    try {
      await this.bucket.delete(new this.#ObjectId(ref));
    } catch (err) {
      if (!/not found/i.test((err as Error).message)) throw err;
    }
  }

  /** Files uploaded before `before` (Unix ms), with their metadata (sweeps of orphans). */
  async listBefore(before: number, limit: number): Promise<Array<{ ref: string; metadata: Record<string, string> }>> {
    const files = await this.bucket
      .find({ uploadDate: { $lt: new Date(before) } }, { limit, projection: { _id: 1, metadata: 1 } })
      .toArray();
    return files.map((f) => ({ ref: f._id.toHexString(), metadata: stringsOf(f.metadata) }));
  }
}

function stringsOf(metadata: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (metadata && typeof metadata === 'object') for (const [k, v] of Object.entries(metadata)) if (typeof v === 'string') out[k] = v;
  return out;
}
