/**
 * Moving a store's content between homes (`npm run store -- export | import`): every collection's
 * documents and every bucket's blobs as JSON lines, Buffers as base64. Blobs get new references in the
 * target home (a GridFS id is not a SQLite one), so import stores the blobs first and rewrites each
 * document's references to them. Collections are read as they are, with no index; the gateway declares
 * its indexes when it opens the target.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { encodeDoc, replaceValues, restoreTags } from './doc-json.js';
import { isDuplicateKey, type DocStore } from './port.js';
import { META } from './schema.js';

type Line =
  | { blob: { bucket: string; ref: string; metadata: Record<string, string>; data: string } }
  | { doc: { collection: string; value: unknown } };

/** A document's line, its value in the embedded home's encoding (doc-json.ts). */
const docLine = (collection: string, value: unknown) => `{"doc":{"collection":${JSON.stringify(collection)},"value":${encodeDoc(value)}}}`;

/** A string that names an exported blob, rewritten to the blob's reference in the target home. */
function rewriteRefs(value: unknown, refs: Map<string, string>): unknown {
  if (typeof value === 'string') return refs.get(value) ?? value;
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  return replaceValues(value as Record<string, unknown>, (inner) => rewriteRefs(inner, refs));
}

/** Collections of documents (GridFS's own collections and system ones are blobs or not ours). */
async function collectionNames(docs: DocStore): Promise<string[]> {
  return (await docs.stats()).map((c) => c.name).filter((n) => !n.includes('.') && !n.startsWith('system') && n !== '(blobs)');
}

export interface TransferCounts {
  documents: number;
  blobs: number;
}

const PAGE = 500;

export async function exportStore(docs: DocStore, file: string): Promise<TransferCounts> {
  const out = createWriteStream(file);
  const write = async (line: string) => {
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  };
  const counts: TransferCounts = { documents: 0, blobs: 0 };
  for (const bucket of await docs.buckets()) {
    const blobs = docs.blobs(bucket);
    for (const { ref, metadata } of await blobs.listBefore(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) {
      const read = await blobs.read(ref);
      if (read.kind !== 'ok') continue;
      const line: Line = { blob: { bucket, ref, metadata, data: read.data.toString('base64') } };
      await write(JSON.stringify(line));
      counts.blobs++;
    }
  }
  for (const name of await collectionNames(docs)) {
    const collection = await docs.collection<{ _id: string | number }>({ name, indexes: [] });
    for (let skip = 0; ; skip += PAGE) {
      const page = await collection.find({}, { skip, limit: PAGE });
      for (const value of page) await write(docLine(name, value));
      counts.documents += page.length;
      if (page.length < PAGE) break;
    }
  }
  out.end();
  await once(out, 'finish');
  return counts;
}

/**
 * Adds an export's content to `docs`. A document whose `_id` is already there is left as it is (an
 * import can be run again after a failure); the schema record of the target is kept.
 */
export async function importStore(docs: DocStore, file: string): Promise<TransferCounts & { skipped: number }> {
  const refs = new Map<string, string>();
  const counts = { documents: 0, blobs: 0, skipped: 0 };
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const text of lines) {
    if (!text.trim()) continue;
    const line = JSON.parse(text) as Line;
    if ('blob' in line) {
      const { bucket, ref, metadata, data } = line.blob;
      refs.set(ref, await docs.blobs(bucket).put(ref, Buffer.from(data, 'base64'), metadata));
      counts.blobs++;
      continue;
    }
    if (line.doc.collection === META.name) continue;
    const collection = await docs.collection<{ _id: string | number }>({ name: line.doc.collection, indexes: [] });
    try {
      await collection.insert(rewriteRefs(restoreTags(line.doc.value), refs) as { _id: string | number });
      counts.documents++;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      counts.skipped++;
    }
  }
  return counts;
}
