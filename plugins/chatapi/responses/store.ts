/**
 * Stored responses (`store` is true unless the request says false, as at OpenAI): what
 * `previous_response_id`, `GET`/`DELETE responses/{id}` and `input_items` read. Kept with the same
 * retention as async results (`store.resultRetentionDays`), in memory or in MongoDB as the gateway's
 * store is configured. The adapter sees only this interface, so where the records live can change
 * without touching the routes.
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
  put(record: StoredResponse): Promise<void>;
  /** The record, or null when it is missing or past its retention. */
  get(id: string): Promise<StoredResponse | null>;
  /** True when a record was removed. */
  delete(id: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The memory store's bound: beyond it the oldest responses go first, so memory stays flat. */
export const MEMORY_MAX_RESPONSES = 10_000;

/**
 * One gateway process: records in a Map in creation order, dropped once past the retention or, the
 * oldest first, beyond `maxRecords` (MongoDB keeps every response for the whole retention).
 */
export class MemoryResponseStore implements ResponseStore {
  readonly #records = new Map<string, StoredResponse>();
  readonly #retentionMs: number;
  readonly #maxRecords: number;
  readonly #now: () => number;

  constructor(retentionMs: number, options: { maxRecords?: number; now?: () => number } = {}) {
    this.#retentionMs = retentionMs;
    this.#maxRecords = options.maxRecords ?? MEMORY_MAX_RESPONSES;
    this.#now = options.now ?? Date.now;
  }

  async put(record: StoredResponse): Promise<void> {
    this.#purge();
    this.#records.set(record.id, record);
    if (this.#records.size > this.#maxRecords) this.#records.delete(this.#records.keys().next().value!);
  }

  async get(id: string): Promise<StoredResponse | null> {
    const record = this.#records.get(id);
    if (!record || this.#expired(record)) return null;
    return record;
  }

  async delete(id: string): Promise<boolean> {
    return this.#records.delete(id);
  }

  async close(): Promise<void> {
    this.#records.clear();
  }

  #expired(record: StoredResponse): boolean {
    return record.createdAt < this.#now() - this.#retentionMs;
  }

  /** Map order is creation order: expired records are at the front. */
  #purge(): void {
    for (const [id, record] of this.#records) {
      if (!this.#expired(record)) return;
      this.#records.delete(id);
    }
  }
}
