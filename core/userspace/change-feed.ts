/**
 * The change feed of the synced kinds (accounts, keys, services): how every gateway on one store sees a
 * change within `syncIntervalMs` plus one store read, without a store call on the request path.
 *
 * Writers stamp each write with a fresh number from the `seq` counter (one for every synced kind).
 * Readers poll for documents with `seq` above their *floor* and apply them idempotently (a document is
 * applied when its `seq` is above the one applied for its ID). The floor is the highest number below
 * which every number handed out has been seen, or given up on:
 *
 * - A number handed out but not yet in any document is a *gap*: a slow writer (its number taken,
 *   its document written later), a document written again since (its old number is gone for good), or a
 *   writer that died. The floor stops below a gap until the number was handed out `slowWriteGraceMs`
 *   ago (known from the counter as earlier polls read it), so a slow writer's document is still read when
 *   it lands; past the grace the gap is given up.
 * - A writer whose stamped write took longer than the grace stamps its document again with a fresh
 *   number, above any floor a reader could have reached meanwhile. So no change is ever missed, and the
 *   cost of a gap is re-reading the documents written during the grace.
 */
import type { Logger } from '../observe/logger.js';
import type { Collection, DocStore, Filter, Update, CollectionSpec } from '../storage/port.js';
import { every } from '../flow/timers.js';
import type { MetaDoc, SyncedDoc } from './collections.js';
import { currentNumber, nextNumber } from './counters.js';

/** One synced kind: its collection and how a document of it is applied to this gateway. */
export interface SyncedKind<T extends SyncedDoc> {
  readonly spec: CollectionSpec;
  /** Applies a document (a deleted one removes); applying the same document again must be harmless. */
  apply(doc: T): void;
}

export interface ChangeFeedOptions {
  intervalMs: number;
  graceMs: number;
  logger: Logger;
  now?: () => number;
}

const SEQ = 'seq';

interface Registered {
  kind: SyncedKind<any>;
  collection: Collection<any>;
}

export class ChangeFeed {
  readonly #meta: Collection<MetaDoc>;
  readonly #options: ChangeFeedOptions;
  readonly #now: () => number;
  readonly #kinds: Registered[] = [];
  /** The seq applied per `<collection>/<id>`. */
  readonly #applied = new Map<string, number>();
  /** The counter as each recent poll read it: a number is given up on once handed out a grace ago. */
  readonly #samples: { at: number; handedOut: number }[] = [];
  #floor = 0;
  #stop: (() => void) | undefined;

  constructor(meta: Collection<MetaDoc>, options: ChangeFeedOptions) {
    this.#meta = meta;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Opens a synced kind's collection and follows it; returns the writer every change to it goes through. */
  async register<T extends SyncedDoc>(docs: DocStore, kind: SyncedKind<T>): Promise<SyncedCollection<T>> {
    const collection = await docs.collection<T>(kind.spec);
    this.#kinds.push({ kind, collection });
    return new SyncedCollection(this, collection, (doc) => this.#apply(kind, doc));
  }

  /** Reads everything once (so a starting gateway serves stored keys from its first request), then polls. */
  async start(): Promise<void> {
    await this.poll();
    this.#stop ??= every(this.#options.intervalMs, () => this.poll(), {
      onError: (err) => this.#options.logger.warn({ err }, 'user space: reading the change feed failed; retrying'),
    });
  }

  stop(): void {
    this.#stop?.();
    this.#stop = undefined;
  }

  /** Every number at or below it has been applied or given up on (tests, diagnostics). */
  get floor(): number {
    return this.#floor;
  }

  /** One read of the feed: documents above the floor of every kind, applied; then the floor moves. */
  async poll(): Promise<void> {
    // The counter first: a number handed out after this read and already written is simply seen early.
    const handedOut = await currentNumber(this.#meta, SEQ);
    // Taken after the counter read (every number it saw was handed out by then) and before the reads below.
    const readAt = this.#now();
    const seen = new Set<number>();
    for (const { kind, collection } of this.#kinds) {
      const docs = (await collection.find({ seq: { $gt: this.#floor } }, { sort: { seq: 1 } })) as SyncedDoc[];
      for (const doc of docs) {
        seen.add(doc.seq);
        this.#apply(kind, doc);
      }
    }
    this.#advance(readAt, handedOut, seen);
  }

  /** A fresh number of the feed. */
  next(): Promise<number> {
    return nextNumber(this.#meta, SEQ);
  }

  get graceMs(): number {
    return this.#options.graceMs;
  }

  now(): number {
    return this.#now();
  }

  #apply(kind: SyncedKind<any>, doc: SyncedDoc): void {
    const key = `${kind.spec.name}/${doc._id}`;
    if ((this.#applied.get(key) ?? 0) >= doc.seq) return;
    this.#applied.set(key, doc.seq);
    try {
      kind.apply(doc);
    } catch (err) {
      this.#options.logger.error({ err, collection: kind.spec.name, id: doc._id }, 'user space: a stored document could not be applied');
    }
  }

  #advance(now: number, handedOut: number, seen: ReadonlySet<number>): void {
    this.#samples.push({ at: now, handedOut });
    // The latest sample at least a grace old: every number up to its count was handed out that long ago.
    while (this.#samples.length > 1 && now - this.#samples[1]!.at >= this.#options.graceMs) this.#samples.shift();
    const settled = now - this.#samples[0]!.at >= this.#options.graceMs ? this.#samples[0]!.handedOut : 0;
    let floor = Math.max(this.#floor, settled);
    while (seen.has(floor + 1)) floor++;
    this.#floor = floor;
  }
}

/**
 * The writer of one synced kind: every write stamps a fresh `seq` and is applied to this gateway at once
 * (read-your-writes), the others within the feed's interval.
 */
export class SyncedCollection<T extends SyncedDoc> {
  readonly #feed: ChangeFeed;
  readonly collection: Collection<T>;
  readonly #applyHere: (doc: T) => void;

  constructor(feed: ChangeFeed, collection: Collection<T>, applyHere: (doc: T) => void) {
    this.#feed = feed;
    this.collection = collection;
    this.#applyHere = applyHere;
  }

  /** Inserts a document (DuplicateKeyError when its `_id` or a unique field is taken). */
  async insert(doc: Omit<T, 'seq'>): Promise<T> {
    const started = this.#feed.now();
    const stamped = { ...doc, seq: await this.#feed.next() } as T;
    await this.collection.insert(stamped);
    return this.#landed(stamped, started);
  }

  /** Updates the one document `filter` matches (compare-and-set); null when none did. */
  async update(filter: Filter, update: Update): Promise<T | null> {
    const started = this.#feed.now();
    const seq = await this.#feed.next();
    const written = await this.collection.findOneAndUpdate(
      filter,
      { ...update, $set: { ...update.$set, seq } },
      { returnDocument: 'after' },
    );
    return written && this.#landed(written, started);
  }

  /** Soft delete: the feed carries `deleted: true` to every gateway; the sweep removes the document later. */
  remove(filter: Filter): Promise<T | null> {
    return this.update({ ...filter, deleted: { $ne: true } }, { $set: { deleted: true, deletedAt: this.#feed.now() } });
  }

  async #landed(doc: T, started: number): Promise<T> {
    let current = doc;
    let since = started;
    // Slower than the grace: a reader may have given up on this number; a fresh one is above its floor.
    while (this.#feed.now() - since >= this.#feed.graceMs) {
      since = this.#feed.now();
      const seq = await this.#feed.next();
      const again = await this.collection.findOneAndUpdate(
        { _id: current._id, seq: current.seq } as Filter,
        { $set: { seq } },
        { returnDocument: 'after' },
      );
      if (!again) break; // Written again since, by a later stamp: that one carries the change.
      current = again;
    }
    this.#applyHere(current);
    return current;
  }
}
