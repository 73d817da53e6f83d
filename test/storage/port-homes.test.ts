/**
 * The store port's unique indexes and `_id` filters, alike on the memory and embedded homes. The
 * memory home keeps each unique index as a map and looks up the documents a filter's `_id` or
 * indexed fields name, so these check that those shortcuts answer as a scan of the whole collection
 * does: a key is freed when its document changes or goes, a looked-up filter still applies its other
 * conditions, its sort and its limit, and (last) random writes and queries answer on the memory home
 * exactly as on the embedded one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { DuplicateKeyError, type Collection, type DocStore, type Filter, type FindOptions } from '../../core/storage/port.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import { openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';

interface Item {
  _id: string;
  slot?: number;
  owner: number;
  name: string;
  at: number;
  status?: string | null;
}

const SPEC = {
  name: 'port_items',
  indexes: [
    { name: 'slot_unique', fields: ['slot'], unique: true },
    { name: 'owner_name_unique', fields: ['owner', 'name'], unique: true },
    { name: 'status_at', fields: ['status', 'at'] },
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

/**
 * A document with Buffers, and caller data shaped like the embedded home's encoding of them (a Buffer
 * as {"$b64": …}, a caller's object of that shape wrapped in {"$lit": …}) and a "__proto__" key as
 * JSON.parse makes one: it must read back as it went in, also after an update rewrote it.
 */
async function expectKeptAsWritten(c: Collection<Item>): Promise<void> {
  const lookAlikes = [
    { $b64: 'AAE=' },
    { $b64: 'AAE=', other: 1 },
    { $b64: 5 },
    { $lit: { a: 1 } },
    { $lit: { $b64: 'AAE=' } },
    { $lit: 'text' },
    [{ $lit: { $lit: {} } }],
  ];
  const doc = {
    _id: 'bin',
    owner: 1,
    name: 'bin',
    at: 1,
    body: Buffer.from([0, 1, 254, 255]),
    parts: [Buffer.from('a'), { inner: Buffer.alloc(0) }, 'text'],
    lookAlikes,
    ...(JSON.parse('{"__proto__": {"$b64": "AQI="}}') as object),
  } as unknown as Item;
  await c.insert(doc);
  const back = (await c.get('bin')) as unknown as Record<string, unknown>;
  expect(back.body).toEqual(Buffer.from([0, 1, 254, 255]));
  expect(back.parts).toEqual([Buffer.from('a'), { inner: Buffer.alloc(0) }, 'text']);
  expect(back.lookAlikes).toEqual(lookAlikes);
  expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual({ $b64: 'AQI=' });
  expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
  await c.findOneAndUpdate({ _id: 'bin' }, { $set: { at: 2 } });
  const again = (await c.findOne({ at: 2 })) as unknown as Record<string, unknown>;
  expect([again.body, again.parts, again.lookAlikes]).toEqual([back.body, back.parts, lookAlikes]);
  expect(Object.getOwnPropertyDescriptor(again, '__proto__')?.value).toEqual({ $b64: 'AQI=' });
}

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

    it('keeps Buffers wherever a document holds them, and caller data that looks like their encoding as it is', async () => {
      await expectKeptAsWritten(await items());
    });
  });
}

const withMongo = requirePrerequisite('the store port on MongoDB beside the memory home', mongoPrerequisite());

describe(`the memory home answers as the embedded${withMongo ? ' and MongoDB homes' : ' home'}`, () => {
  let mongo: MongoTestServer | undefined;
  beforeAll(async () => {
    if (withMongo) mongo = await startMongo();
  });
  afterAll(async () => {
    await mongo?.stop();
  });

  it.skipIf(!withMongo)('keeps Buffers, caller data that looks like their encoding and a "__proto__" key on MongoDB too', async () => {
    const connection = await openMongoConnection(mongo!.freshDatabaseUri());
    try {
      await expectKeptAsWritten(await new MongoDocStore(connection).collection<Item>(SPEC));
    } finally {
      await connection.close();
    }
  });

  it('for 600 random writes, each followed by random queries (equalities, $in, $or, ranges, sorts, limits)', async () => {
    const opened = [await homes.memory!(), await homes.embedded!()];
    try {
      if (mongo) {
        const connection = await openMongoConnection(mongo.freshDatabaseUri());
        opened.push({ docs: new MongoDocStore(connection), close: () => connection.close() });
      }
      const [m, ...others] = await Promise.all(opened.map((home) => home.docs.collection<Item>(SPEC)));
      let seed = 20261127;
      const random = (n: number) => {
        // mulberry32: a fixed seed, so a failure names a step that comes again on every run
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
      };
      const pick = <V>(values: readonly V[]): V => values[random(values.length)]!;
      const statuses = ['QUEUED', 'PROCESSING', 'DONE', null, undefined] as const;
      const id = () => `d${random(40)}`;
      const status = () => pick(statuses);
      const filter = (): Filter =>
        pick([
          () => ({ status: status() ?? 'DONE' }),
          () => ({ status: { $in: [status() ?? 'QUEUED', status() ?? 'DONE'] }, owner: random(3) }),
          () => ({
            $or: [
              { status: 'QUEUED', owner: { $nin: [random(3)] } },
              { status: 'PROCESSING', at: { $lt: random(100) } },
            ],
          }),
          () => ({ $or: [{ status: 'QUEUED' }, { owner: random(3) }] }),
          () => ({ _id: id(), status: { $ne: null } }),
          () => ({ _id: { $in: [id(), id(), id()] } }),
          () => ({ status: null }),
          () => ({ status: { $exists: false } }),
          () => ({ owner: random(3), at: { $gte: random(100) } }),
          () => ({}),
        ])();
      const write = (c: Collection<Item>): Promise<unknown> => {
        const which = pick([0, 0, 0, 0, 1, 2, 3, 4]); // inserts most, so the collection grows
        const doc: Item = { _id: id(), owner: random(3), name: `n${random(30)}`, at: random(100) };
        const s = status();
        if (s !== undefined) doc.status = s;
        if (random(3) === 0) doc.slot = random(10);
        const f = filter();
        const set = { $set: { status: status() ?? 'DONE', at: random(100) } };
        return [
          () => c.insert(doc),
          () => c.updateMany(f, set),
          () => c.deleteMany(pick([{ _id: doc._id }, { status: doc.status ?? 'DONE', owner: doc.owner }])),
          () => c.findOneAndUpdate(f, set, { sort: { at: 1 }, returnDocument: 'before' }),
          () => c.findOneAndUpdate({ _id: doc._id }, { $set: { slot: random(10) }, $unset: ['status'] }, { upsert: true }),
        ][which]!();
      };
      const outcome = (p: Promise<unknown>) =>
        p.then(
          (v) => ({ ok: v }),
          (err: Error) => ({ error: err.name }),
        );
      for (let step = 0; step < 600; step++) {
        const before = seed;
        const mine = await outcome(write(m!));
        for (const [home, other] of others.entries()) {
          seed = before; // the same write on each other home
          expect(await outcome(write(other)), `write ${step} on home ${home + 2}`).toEqual(mine);
        }
        for (let q = 0; q < 3; q++) {
          const f = filter();
          const options: FindOptions = pick<FindOptions>([
            {},
            { sort: { at: -1 as const }, limit: 1 },
            { sort: { status: 1 as const, at: 1 as const }, skip: 1, limit: 3 },
          ]);
          const expected = await m!.find(f, options);
          for (const [home, other] of others.entries()) {
            const where = `step ${step} on home ${home + 2}: ${JSON.stringify(f)} ${JSON.stringify(options)}`;
            expect(await other.find(f, options), where).toEqual(expected);
            expect(await other.count(f), where).toBe(await m!.count(f));
          }
        }
      }
      expect(await m!.count({})).toBeGreaterThan(10);
    } finally {
      for (const home of opened) await home.close();
    }
  });
});
