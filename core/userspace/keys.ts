import { randomBytes } from 'node:crypto';
import type { AccountConfig, Permission } from '../config/types.js';
import type { Caller, Directory, KeySecret } from '../admission/directory.js';
import { hashSecret } from '../admission/secret-hashes.js';
import type { Collection, CollectionSpec, DocStore, Filter } from '../storage/port.js';
import type { Budget } from './budgets.js';

/** A stored API key (`us_keys`): only hashes of its secrets are kept. Times are epoch milliseconds. */
export interface KeyDoc {
  _id: string;
  accountId: number;
  name: string;
  /** `hashSecret` of the current secret. */
  keyHash: string;
  /** The secret's first characters, to tell keys apart in lists (never enough to use it). */
  prefix: string;
  permissions: Permission[];
  /** Service IDs the key may call; absent: every service its account may call. */
  services?: number[];
  expiresAt?: number;
  requestsPerSecond?: number;
  budgets: Budget[];
  createdAt: number;
  revokedAt?: number;
  /** After a rotation: the old secret's hash, honoured until `previousValidUntil`. */
  previousKeyHash?: string;
  previousValidUntil?: number;
  /** Change-feed stamp: every gateway applies documents by rising `seq`. */
  seq: number;
  deleted?: boolean;
}

export const US_KEYS: CollectionSpec = {
  name: 'us_keys',
  indexes: [
    { name: 'keyHash', fields: ['keyHash'], unique: true },
    { name: 'accountId', fields: ['accountId'] },
    { name: 'seq', fields: ['seq'] },
  ],
};

/** Secrets start with this, so scanners (and people) recognise a leaked gateway key. */
const SECRET_PREFIX = 'gwk_';
/** Characters of the secret shown in lists. */
const SHOWN = 8;
/** Keys one account may hold (revoked ones not counted): bounds the per-account list and the directory. */
export const MAX_KEYS_PER_ACCOUNT = 1000;

/** A new secret: 32 random bytes (256 bits), URL-safe. */
export function newKeySecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

const keyIdOf = (): string => `key_${randomBytes(12).toString('base64url')}`;

/**
 * The callers a stored key's secrets stand for on the request path: its current secret until its expiry,
 * and after a rotation its previous one until the grace ends (or the expiry, whichever comes first).
 */
export function keySecrets(doc: KeyDoc, account: AccountConfig): KeySecret[] {
  const base = {
    account,
    keyName: doc.name,
    keyId: doc._id,
    permissions: new Set(doc.permissions),
    ...(doc.services ? { services: new Set(doc.services) } : {}),
    ...(doc.requestsPerSecond !== undefined ? { requestsPerSecond: doc.requestsPerSecond } : {}),
    ...(doc.budgets.length ? { budgets: doc.budgets } : {}),
  };
  const current: Caller = doc.expiresAt !== undefined ? { ...base, validUntil: doc.expiresAt } : base;
  const secrets: KeySecret[] = [{ hash: doc.keyHash, caller: current }];
  if (doc.previousKeyHash && doc.previousValidUntil !== undefined) {
    const until = Math.min(doc.previousValidUntil, doc.expiresAt ?? Infinity);
    secrets.push({ hash: doc.previousKeyHash, caller: { ...base, validUntil: until } });
  }
  return secrets;
}

/**
 * Applies one stored key document to a gateway's Directory (the change feed's applier for `us_keys`):
 * idempotent; a revoked or deleted key, or one of an account this gateway does not know, is removed.
 */
export function applyKeyDoc(directory: Directory, doc: KeyDoc): void {
  const account = directory.findAccount(doc.accountId);
  if (doc.deleted || doc.revokedAt !== undefined || !account) directory.removeKey(doc._id);
  else directory.setKey(doc._id, keySecrets(doc, account));
}

/** What a caller may set on a key (created or changed). */
export interface KeySettings {
  name: string;
  permissions: Permission[];
  services?: number[] | null;
  expiresAt?: number | null;
  requestsPerSecond?: number | null;
  budgets?: Budget[];
}

/**
 * The `us_keys` collection: create, list, change, revoke and rotate keys. Each write stamps a fresh
 * change-feed `seq` (`stamp`), so every gateway applies it within its sync interval.
 */
export class KeyStore {
  readonly #keys: Collection<KeyDoc>;
  readonly #stamp: () => Promise<number>;
  readonly #now: () => number;

  constructor(keys: Collection<KeyDoc>, stamp: () => Promise<number>, now: () => number = Date.now) {
    this.#keys = keys;
    this.#stamp = stamp;
    this.#now = now;
  }

  static async open(docs: DocStore, stamp: () => Promise<number>): Promise<KeyStore> {
    return new KeyStore(await docs.collection<KeyDoc>(US_KEYS), stamp);
  }

  get collection(): Collection<KeyDoc> {
    return this.#keys;
  }

  /** Creates a key; the secret is returned only here (the store keeps its hash). Undefined when the account holds too many. */
  async create(accountId: number, settings: KeySettings): Promise<{ doc: KeyDoc; secret: string } | undefined> {
    if ((await this.#keys.count(live({ accountId }))) >= MAX_KEYS_PER_ACCOUNT) return undefined;
    const secret = newKeySecret();
    const doc: KeyDoc = {
      _id: keyIdOf(),
      accountId,
      name: settings.name,
      keyHash: hashSecret(secret),
      prefix: secret.slice(0, SHOWN),
      permissions: settings.permissions,
      ...optional(settings),
      budgets: settings.budgets ?? [],
      createdAt: this.#now(),
      seq: await this.#stamp(),
    };
    await this.#keys.insert(doc);
    return { doc, secret };
  }

  list(accountId: number): Promise<KeyDoc[]> {
    return this.#keys.find(live({ accountId }), { sort: { createdAt: 1 }, limit: MAX_KEYS_PER_ACCOUNT });
  }

  get(accountId: number, keyId: string): Promise<KeyDoc | null> {
    return this.#keys.findOne(live({ _id: keyId, accountId }));
  }

  /** Changes a key's settings (a `null` removes an optional one); null when there is no such live key. */
  async update(accountId: number, keyId: string, changes: Partial<KeySettings>): Promise<KeyDoc | null> {
    const set: Record<string, unknown> = { seq: await this.#stamp() };
    const unset: string[] = [];
    for (const [field, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      if (value === null) unset.push(field);
      else set[field] = value;
    }
    return this.#keys.findOneAndUpdate(live({ _id: keyId, accountId }), { $set: set, ...(unset.length ? { $unset: unset } : {}) });
  }

  /** Revokes a key: every gateway refuses its secrets (current and previous) from its next sync. */
  async revoke(accountId: number, keyId: string): Promise<KeyDoc | null> {
    return this.#keys.findOneAndUpdate(live({ _id: keyId, accountId }), { $set: { revokedAt: this.#now(), deleted: true, seq: await this.#stamp() } });
  }

  /**
   * Gives a key a new secret; the old one keeps working for `graceSeconds` (0: stops at once). A rotation
   * during another's grace ends that grace: only the secret being replaced gets one.
   */
  async rotate(accountId: number, keyId: string, graceSeconds: number): Promise<{ doc: KeyDoc; secret: string } | null> {
    const before = await this.get(accountId, keyId);
    if (!before) return null;
    const secret = newKeySecret();
    const grace = graceSeconds > 0 ? { previousKeyHash: before.keyHash, previousValidUntil: this.#now() + graceSeconds * 1000 } : {};
    const doc = await this.#keys.findOneAndUpdate(
      // The hash it had: of two rotations at once, one wins and the other answers 404.
      live({ _id: keyId, accountId, keyHash: before.keyHash }),
      {
        $set: { keyHash: hashSecret(secret), prefix: secret.slice(0, SHOWN), seq: await this.#stamp(), ...grace },
        ...(graceSeconds > 0 ? {} : { $unset: ['previousKeyHash', 'previousValidUntil'] }),
      },
    );
    return doc && { doc, secret };
  }
}

function live(filter: Filter): Filter {
  return { ...filter, deleted: { $ne: true } };
}

function optional(settings: KeySettings): Partial<KeyDoc> {
  return {
    ...(settings.services ? { services: settings.services } : {}),
    ...(settings.expiresAt ? { expiresAt: settings.expiresAt } : {}),
    ...(settings.requestsPerSecond ? { requestsPerSecond: settings.requestsPerSecond } : {}),
  };
}
