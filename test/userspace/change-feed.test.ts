import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/observe/logger.js';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { ChangeFeed } from '../../core/userspace/change-feed.js';
import type { MetaDoc, SyncedDoc } from '../../core/userspace/collections.js';

const SPEC = { name: 'us_things', indexes: [{ name: 'seq', fields: ['seq'] }] };
const GRACE = 10_000;

interface Thing extends SyncedDoc {
  _id: string;
  value: number;
}

/** Two feeds on one store: a writer's and a reader's, each with its own clock. */
async function pair() {
  const docs = new MemoryDocStore();
  const meta = await docs.collection<MetaDoc>({ name: 'us_meta', indexes: [] });
  const clock = { reader: 1_000_000, writer: 1_000_000 };
  const applied: Thing[] = [];
  const reader = new ChangeFeed(meta, { intervalMs: 100, graceMs: GRACE, logger: silentLogger(), now: () => clock.reader });
  await reader.register<Thing>(docs, { spec: SPEC, apply: (doc) => applied.push(doc) });
  let writerNow: () => number = () => clock.writer;
  const writer = new ChangeFeed(meta, { intervalMs: 100, graceMs: GRACE, logger: silentLogger(), now: () => writerNow() });
  const things = await writer.register<Thing>(docs, { spec: SPEC, apply: () => undefined });
  return { docs, meta, clock, applied, reader, writer, things, setWriterClock: (fn: () => number) => (writerNow = fn) };
}

describe('the user-space change feed', () => {
  it('applies each change once, however often it is read', async () => {
    const { reader, things, applied } = await pair();
    await things.insert({ _id: 'a', value: 1 });
    await reader.poll();
    await reader.poll();
    await things.update({ _id: 'a' }, { $set: { value: 2 } });
    await reader.poll();
    await reader.poll();
    expect(applied.map((d) => d.value)).toEqual([1, 2]);
    expect(reader.floor).toBe(2);
  });

  it('does not miss a slow writer: a number handed out before a later write is still read when its document lands', async () => {
    const { reader, writer, things, applied, clock } = await pair();
    // Writer A takes number 1, then stalls before writing; writer B writes number 2.
    const slowSeq = await writer.next();
    await things.insert({ _id: 'fast', value: 2 });
    await reader.poll();
    expect(applied.map((d) => d._id)).toEqual(['fast']);
    expect(reader.floor).toBe(0); // held below the gap
    clock.reader += GRACE - 1;
    await things.collection.insert({ _id: 'slow', value: 1, seq: slowSeq });
    await reader.poll();
    expect(applied.map((d) => d._id)).toEqual(['fast', 'slow']);
    expect(reader.floor).toBe(2);
  });

  it('gives a gap up once its number was handed out a grace ago (a document written again, a writer that died)', async () => {
    const { reader, writer, things, clock } = await pair();
    await writer.next(); // a writer that died
    await things.insert({ _id: 'b', value: 1 });
    await reader.poll();
    expect(reader.floor).toBe(0);
    clock.reader += GRACE - 1;
    await reader.poll();
    expect(reader.floor).toBe(0);
    clock.reader += 1;
    await reader.poll();
    expect(reader.floor).toBe(2);
  });

  it('a writer slower than the grace stamps its document again, above any floor a reader reached meanwhile', async () => {
    const { reader, things, applied, setWriterClock } = await pair();
    let calls = 0;
    setWriterClock(() => (++calls === 1 ? 0 : GRACE));
    const written = await things.insert({ _id: 'late', value: 7 });
    expect(written.seq).toBe(2);
    await reader.poll();
    expect(applied.map((d) => [d._id, d.seq])).toEqual([['late', 2]]);
  });
});
