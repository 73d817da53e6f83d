/**
 * The store port's unique indexes and `_id` filters, alike on the memory and embedded homes. The
 * memory home keeps each unique index as a map and reads the documents a filter's `_id` names
 * directly, so these check that those shortcuts answer as a scan of the whole collection does: a
 * key is freed when its document changes or goes, and an `_id` filter still applies its other
 * conditions, its sort and its limit.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { DuplicateKeyError, type Collection, type DocStore } from '../../core/storage/port.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';

interface Item {
  _id: string;
  slot?: number;
  owner: number;
  name: string;
  at: number;
}

const SPEC = {
  name: 'port_items',
  indexes: [
    { name: 'slot_unique', fields: ['slot'], unique: true },
    { name: 'owner_name_unique', fields: ['owner', 'name'], unique: true },
  ],
};

const homes: Record<string, () => Promise<{ docs: DocStore; close(): Promise<void> }>> = {
  memory: async () => {
    const docs = new MemoryDocStore();
    return { docs, close: () => docs.close() };
  },
  embedded: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-port-'));
    const docs = new SqliteDocStore(dir);
    return {
      docs,
      async close() {
        await docs.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

for (const [home, open] of Object.entries(homes)) {
  describe(`the store port on the ${home} home: unique indexes and _id filters`, () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });
    const items = async (): Promise<Collection<Item>> => {
      const opened = await open();
      close = opened.close;
      return opened.docs.collection<Item>(SPEC);
    };
    const duplicate = (promise: Promise<unknown>) => expect(promise).rejects.toBeInstanceOf(DuplicateKeyError);

    it('refuses a taken key, on insert and on update, and names the index', async () => {
      const c = await items();
      await c.insert({ _id: 'a', slot: 1, owner: 1, name: 'x', at: 1 });
      await duplicate(c.insert({ _id: 'b', slot: 1, owner: 2, name: 'y', at: 2 }));
      await expect(c.insert({ _id: 'b', owner: 1, name: 'x', at: 2 })).rejects.toMatchObject({ index: 'owner_name_unique' });
      await c.insert({ _id: 'b', slot: 2, owner: 2, name: 'x', at: 2 });
      await duplicate(c.findOneAndUpdate({ _id: 'b' }, { $set: { slot: 1 } }));
      await duplicate(c.updateMany({ _id: 'b' }, { $set: { owner: 1 } }));
      // A refused write changes nothing, and a document may keep its own key.
      expect(await c.get('b')).toMatchObject({ slot: 2, owner: 2 });
      expect(await c.findOneAndUpdate({ _id: 'b' }, { $set: { slot: 2, at: 3 } })).toMatchObject({ slot: 2, at: 3 });
    });

    it('frees a key when its document moves off it, drops the field, or is deleted', async () => {
      const c = await items();
      await c.insert({ _id: 'a', slot: 1, owner: 1, name: 'x', at: 1 });
      await c.insert({ _id: 'b', slot: 2, owner: 1, name: 'y', at: 2 });
      await c.findOneAndUpdate({ _id: 'a' }, { $set: { slot: 10, name: 'moved' } });
      await c.insert({ _id: 'c', slot: 1, owner: 1, name: 'x', at: 3 });
      await duplicate(c.insert({ _id: 'd', slot: 10, owner: 9, name: 'q', at: 4 }));
      await c.updateMany({ _id: 'b' }, { $unset: ['slot'] });
      await c.insert({ _id: 'e', slot: 2, owner: 2, name: 'z', at: 5 });
      // Sparse: any number of documents without the field.
      await c.insert({ _id: 'f', owner: 3, name: 'z', at: 6 });
      await c.deleteMany({ _id: 'c' });
      await c.insert({ _id: 'g', slot: 1, owner: 1, name: 'x', at: 7 });
      expect((await c.find({})).map((d) => [d._id, d.slot ?? null])).toEqual([
        ['a', 10],
        ['b', null],
        ['e', 2],
        ['f', null],
        ['g', 1],
      ]);
    });

    it('an upsert takes a key only when it is free', async () => {
      const c = await items();
      await c.insert({ _id: 'a', slot: 1, owner: 1, name: 'x', at: 1 });
      await duplicate(c.findOneAndUpdate({ _id: 'n' }, { $set: { slot: 1, owner: 5, name: 'n', at: 2 } }, { upsert: true }));
      expect(await c.get('n')).toBeNull();
      await c.findOneAndUpdate({ _id: 'n' }, { $set: { slot: 5, owner: 5, name: 'n', at: 2 } }, { upsert: true });
      await duplicate(c.insert({ _id: 'm', slot: 5, owner: 6, name: 'm', at: 3 }));
    });

    it('an _id filter reads the documents it names and still applies the rest of the filter, the sort and the limit', async () => {
      const c = await items();
      for (const [i, id] of ['d', 'b', 'a', 'c'].entries()) await c.insert({ _id: id, owner: i % 2, name: id, at: 10 - i });
      expect(await c.find({ _id: 'b' })).toMatchObject([{ _id: 'b' }]);
      expect(await c.find({ _id: 'b', owner: 0 })).toEqual([]);
      expect(await c.find({ _id: 'zz' })).toEqual([]);
      expect((await c.find({ _id: { $in: ['c', 'zz', 'a', 'c'] } })).map((d) => d._id)).toEqual(['a', 'c']);
      expect((await c.find({ _id: { $in: ['c', 'a', 'd'] }, owner: 0 })).map((d) => d._id)).toEqual(['a', 'd']);
      expect((await c.find({ _id: { $in: ['c', 'a', 'd'] } }, { sort: { at: 1 }, limit: 2 })).map((d) => d._id)).toEqual(['c', 'a']);
      expect((await c.findOne({ _id: { $in: ['b', 'd'] } }, { sort: { at: 1 } }))?._id).toBe('b');
      expect((await c.findOne({}, { sort: { at: -1 } }))?._id).toBe('d');
      expect((await c.find({}, { sort: { owner: 1 }, skip: 1, limit: 2 })).map((d) => d._id)).toEqual(['d', 'b']);
      expect(await c.deleteMany({ _id: { $in: ['a', 'b'] } })).toBe(2);
      expect(await c.count({})).toBe(2);
    });
  });
}
