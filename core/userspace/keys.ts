import { randomBytes } from 'node:crypto';
import type { AccountConfig, Permission } from '../config/types.js';
import type { Caller, Directory, KeyEntry } from '../admission/directory.js';
import { hashSecret } from '../admission/secret-hashes.js';
import type { Filter } from '../storage/port.js';
import type { Budget } from './budgets.js';
import type { SyncedCollection, SyncedKind } from './change-feed.js';
import { KEYS, type SyncedDoc } from './collections.js';

/** A stored API key (`us_keys`): only hashes of its secrets are kept. Times are epoch milliseconds. */
export interface KeyDoc extends SyncedDoc {
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
}

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
 * The Directory entry of a stored key: its current secret until its expiry, and after a rotation its
 * previous one until the grace ends (or the expiry, whichever comes first).
 */
export function keyEntry(doc: KeyDoc): KeyEntry {
  const permissions = new Set(doc.permissions);
  const services = doc.services && new Set(doc.services);
  const graceUntil =
    doc.previousKeyHash && doc.previousValidUntil !== undefined ? Math.min(doc.previousValidUntil, doc.expiresAt ?? Infinity) : undefined;
  const hashes = graceUntil !== undefined ? [doc.keyHash, doc.previousKeyHash!] : [doc.keyHash];
  return {
    id: doc._id,
    accountId: doc.accountId,
    hashes,
    caller(account: AccountConfig, hash: string): Caller {
      const validUntil = hash === doc.keyHash ? doc.expiresAt : graceUntil;
      return {
        account,
        keyName: doc.name,
        keyId: doc._id,
        permissions,
        ...(services ? { services } : {}),
        ...(doc.requestsPerSecond !== undefined ? { requestsPerSecond: doc.requestsPerSecond } : {}),
        ...(doc.budgets.length ? { budgets: doc.budgets } : {}),
        ...(validUntil !== undefined ? { validUntil } : {}),
      };
    },
  };
}

/** Applies stored keys to a Directory (the change feed's kind for `us_keys`): a revoked or deleted key is removed. */
export function keyKind(directory: Directory): SyncedKind<KeyDoc> {
  return {
    spec: KEYS,
    apply(doc) {
      if (doc.deleted || doc.revokedAt !== undefined) directory.removeKey(doc._id);
      else directory.putKey(keyEntry(doc));
    },
  };
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
 * The `us_keys` collection: create, list, change, revoke and rotate keys. Every write goes through the
 * change feed's writer (a fresh `seq`, applied here at once and on every other gateway within its sync).
 */
export class KeyStore {
  readonly #keys: SyncedCollection<KeyDoc>;
  readonly #now: () => number;

  constructor(keys: SyncedCollection<KeyDoc>, now: () => number = Date.now) {
    this.#keys = keys;
    this.#now = now;
  }

  /** Creates a key; the secret is returned only here (the store keeps its hash). Undefined when the account holds too many. */
  async create(accountId: number, settings: KeySettings): Promise<{ doc: KeyDoc; secret: string } | undefined> {
    if ((await this.#keys.collection.count(live({ accountId }))) >= MAX_KEYS_PER_ACCOUNT) return undefined;
    const secret = newKeySecret();
    const doc = await this.#keys.insert({
      _id: keyIdOf(),
      accountId,
      name: settings.name,
      keyHash: hashSecret(secret),
      prefix: secret.slice(0, SHOWN),
      permissions: settings.permissions,
      ...optional(settings),
      budgets: settings.budgets ?? [],
      createdAt: this.#now(),
    });
    return { doc, secret };
  }

  list(accountId: number): Promise<KeyDoc[]> {
    return this.#keys.collection.find(live({ accountId }), { sort: { createdAt: 1 }, limit: MAX_KEYS_PER_ACCOUNT });
  }

  get(accountId: number, keyId: string): Promise<KeyDoc | null> {
    return this.#keys.collection.findOne(live({ _id: keyId, accountId }));
  }

  /** Changes a key's settings (a `null` removes an optional one); null when there is no such live key. */
  update(accountId: number, keyId: string, changes: Partial<KeySettings>): Promise<KeyDoc | null> {
    const set: Record<string, unknown> = {};
    const unset: string[] = [];
    for (const [field, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      if (value === null) unset.push(field);
      else set[field] = value;
    }
    return this.#keys.update(live({ _id: keyId, accountId }), { $set: set, ...(unset.length ? { $unset: unset } : {}) });
  }

  /** Revokes a key: every gateway refuses its secrets (current and previous) from its next sync. */
  revoke(accountId: number, keyId: string): Promise<KeyDoc | null> {
    const now = this.#now();
    return this.#keys.update(live({ _id: keyId, accountId }), { $set: { revokedAt: now, deleted: true, deletedAt: now } });
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
    const doc = await this.#keys.update(
      // The hash it had: of two rotations at once, one wins and the other answers 404.
      live({ _id: keyId, accountId, keyHash: before.keyHash }),
      {
        $set: { keyHash: hashSecret(secret), prefix: secret.slice(0, SHOWN), ...grace },
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
