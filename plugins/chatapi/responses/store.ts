/**
 * Stored responses (`store` is true unless the request says false, as at OpenAI): what
 * `previous_response_id`, `GET`/`DELETE responses/{id}` and `input_items` read. Kept for the
 * adapter's `responses.retentionDays`, in the gateway's store (embedded, MongoDB or memory),
 * at most `responses.maxPerAccount` per account: past it the account's own oldest response goes,
 * never another account's. Their bytes count against the account's storage quota. The adapter sees
 * only this interface, so where the records live can change without touching the routes.
 */
import type { Collection, CollectionSpec, DocStore } from '../../../core/plugins/index.js';
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

interface ResponseDoc {
  _id: string;
  ownerId: number;
  createdAt: number;
  /** The UTF-8 bytes of the three JSON parts: what the storage quota counts. */
  bytes: number;
  response: string;
  inputItems: string;
  conversation: string;
}

export const RESPONSES: CollectionSpec = {
  name: 'chatResponses',
  indexes: [
    { name: 'owner_created', fields: ['ownerId', 'createdAt'] },
    { name: 'created', fields: ['createdAt'] },
  ],
};

/**
 * Stored responses on the store port (embedded, MongoDB or memory), shared by every process on the
 * store: one document per response, the JSON parts as text (read back whole, never queried) with
 * their bytes. Reads and counts skip records past the retention; the store's sweeper removes them
 * (`purgeExpired`). Each account keeps at most `maxPerAccount`: a write past it removes that
 * account's oldest.
 */
export class DocResponseStore implements ResponseStore {
  readonly #responses: Collection<ResponseDoc>;
  readonly #limits: ResponseStoreLimits;
  readonly #now: () => number;

  private constructor(responses: Collection<ResponseDoc>, limits: ResponseStoreLimits, now: () => number) {
    this.#responses = responses;
    this.#limits = limits;
    this.#now = now;
  }

  static async open(docs: DocStore, limits: ResponseStoreLimits, options: { now?: () => number } = {}): Promise<DocResponseStore> {
    return new DocResponseStore(await docs.collection<ResponseDoc>(RESPONSES), limits, options.now ?? Date.now);
  }

  async put(record: StoredResponse): Promise<void> {
    const response = JSON.stringify(record.response);
    const inputItems = JSON.stringify(record.inputItems);
    const conversation = JSON.stringify(record.conversation);
    await this.#responses.deleteMany({ _id: record.id });
    await this.#responses.insert({
      _id: record.id,
      ownerId: record.ownerId,
      createdAt: record.createdAt,
      bytes: Buffer.byteLength(response) + Buffer.byteLength(inputItems) + Buffer.byteLength(conversation),
      response,
      inputItems,
      conversation,
    });
    await this.#evictBeyondBound(record.ownerId);
  }

  /** Removes the owner's oldest documents past `maxPerAccount` (only the owner's: never another account's). */
  async #evictBeyondBound(ownerId: number): Promise<void> {
    const excess = (await this.#responses.count({ ownerId })) - this.#limits.maxPerAccount;
    if (excess <= 0) return;
    const oldest = await this.#responses.find({ ownerId }, { sort: { createdAt: 1 }, limit: excess });
    await this.#responses.deleteMany({ ownerId, _id: { $in: oldest.map((d) => d._id) } });
  }

  async get(id: string): Promise<StoredResponse | null> {
    const doc = await this.#responses.findOne({ _id: id, createdAt: { $gte: this.#oldestKept() } });
    if (!doc) return null;
    return {
      id: doc._id,
      ownerId: doc.ownerId,
      createdAt: doc.createdAt,
      response: JSON.parse(doc.response) as Json,
      inputItems: JSON.parse(doc.inputItems) as Json[],
      conversation: JSON.parse(doc.conversation) as Json[],
    };
  }

  async delete(id: string): Promise<boolean> {
    return (await this.#responses.deleteMany({ _id: id })) === 1;
  }

  async storedBytes(ownerId: number): Promise<number> {
    const [bytes = 0] = await this.#responses.sum({ ownerId, createdAt: { $gte: this.#oldestKept() } }, ['bytes']);
    return bytes;
  }

  /** Removes the records past the retention (the store's sweeper calls it); returns how many. */
  purgeExpired(): Promise<number> {
    return this.#responses.deleteMany({ createdAt: { $lt: this.#oldestKept() } });
  }

  /** The store port is the gateway's; it closes it. */
  async close(): Promise<void> {}

  #oldestKept(): number {
    return this.#now() - this.#limits.retentionMs;
  }
}
