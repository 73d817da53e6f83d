/**
 * Stored responses (`store` is true unless the request says false, as at OpenAI): what
 * `previous_response_id`, `GET`/`DELETE responses/{id}` and `input_items` read. Kept for the
 * adapter's `responses.retentionDays`, in memory or in MongoDB as the gateway's store is configured,
 * at most `responses.maxPerAccount` per account: past it the account's own oldest response goes,
 * never another account's. Their bytes count against the account's storage quota. The adapter sees
 * only this interface, so where the records live can change without touching the routes.
 */
import type { JsonObject as Json } from '../../_shared/openai/json-object.js';

export interface StoredResponse {
  /** `resp_…` */
  id: string;
  /** The account that created it; only it may read or delete it. */
  ownerId: number;
  /** Unix milliseconds. */
  createdAt: number;
  /** The finished response object. */
  response: Json;
  /** This turn's input items, with ids. */
  inputItems: Json[];
  /** The chat conversation through this turn's answer, without instructions: what a follow-up continues. */
  conversation: Json[];
}

export interface ResponseStore {
  /** Stores the record; past the owner's bound, the owner's oldest records go. */
  put(record: StoredResponse): Promise<void>;
  /** The record, or null when it is missing or past its retention. */
  get(id: string): Promise<StoredResponse | null>;
  /** True when a record was removed. */
  delete(id: string): Promise<boolean>;
  /** Bytes the account keeps in responses not past their retention (the storage quota's meter). */
  storedBytes(ownerId: number): Promise<number>;
  close(): Promise<void>;
}

export interface ResponseStoreLimits {
  retentionMs: number;
  /** Most responses one account keeps; its oldest go first beyond it. */
  maxPerAccount: number;
}

/** Default of `responses.maxPerAccount`. */
export const DEFAULT_MAX_RESPONSES_PER_ACCOUNT = 10_000;

/** The bytes a record keeps stored: its JSON parts as UTF-8, as MongoDB keeps them. */
export function recordBytes(record: Pick<StoredResponse, 'response' | 'inputItems' | 'conversation'>): number {
  return jsonBytes(record.response) + jsonBytes(record.inputItems) + jsonBytes(record.conversation);
}

export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

interface Kept {
  record: StoredResponse;
  bytes: number;
}

/** One account's records in creation order, and their bytes. */
interface Shelf {
  ids: Set<string>;
  bytes: number;
}

/**
 * One gateway process: records in a Map in creation order (expired ones are at its front and go at
 * the next write or count), and each account's ids in creation order, so that bounding one account
 * drops only its own oldest.
 */
export class MemoryResponseStore implements ResponseStore {
  readonly #records = new Map<string, Kept>();
  readonly #shelves = new Map<number, Shelf>();
  readonly #limits: ResponseStoreLimits;
  readonly #now: () => number;

  constructor(limits: ResponseStoreLimits, options: { now?: () => number } = {}) {
    this.#limits = limits;
    this.#now = options.now ?? Date.now;
  }

  async put(record: StoredResponse): Promise<void> {
    this.#purge();
    this.#remove(record.id);
    const bytes = recordBytes(record);
    this.#records.set(record.id, { record, bytes });
    let shelf = this.#shelves.get(record.ownerId);
    if (!shelf) this.#shelves.set(record.ownerId, (shelf = { ids: new Set(), bytes: 0 }));
    shelf.ids.add(record.id);
    shelf.bytes += bytes;
    while (shelf.ids.size > this.#limits.maxPerAccount) this.#remove(shelf.ids.values().next().value!);
  }

  async get(id: string): Promise<StoredResponse | null> {
    const kept = this.#records.get(id);
    if (!kept || this.#expired(kept.record)) return null;
    return kept.record;
  }

  async delete(id: string): Promise<boolean> {
    return this.#remove(id);
  }

  async storedBytes(ownerId: number): Promise<number> {
    this.#purge();
    return this.#shelves.get(ownerId)?.bytes ?? 0;
  }

  async close(): Promise<void> {
    this.#records.clear();
    this.#shelves.clear();
  }

  #remove(id: string): boolean {
    const kept = this.#records.get(id);
    if (!kept) return false;
    this.#records.delete(id);
    const shelf = this.#shelves.get(kept.record.ownerId)!;
    shelf.ids.delete(id);
    shelf.bytes -= kept.bytes;
    if (shelf.ids.size === 0) this.#shelves.delete(kept.record.ownerId);
    return true;
  }

  #expired(record: StoredResponse): boolean {
    return record.createdAt < this.#now() - this.#limits.retentionMs;
  }

  /** Map order is creation order: expired records are at the front. */
  #purge(): void {
    for (const [id, { record }] of this.#records) {
      if (!this.#expired(record)) return;
      this.#remove(id);
    }
  }
}
