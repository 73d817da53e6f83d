/**
 * The user space's stored model: one collection per kind on the store port (prefix `us_`), declared
 * once here with its indexes. Accounts, keys and services are *synced* kinds: every write stamps a
 * fresh `seq` (change-feed.ts) and every gateway applies them to its Directory; users, members and
 * sessions are read from the store when the user-space API needs them (never on the model request path).
 */
import type { CollectionSpec } from '../storage/port.js';
import type { MemberRole } from '../config/types.js';
import type { Budget } from './budgets.js';

export type { MemberRole } from '../config/types.js';
export type { Budget } from './budgets.js';

/** What every synced document carries: its change-feed number, and a soft delete (swept later). */
export interface SyncedDoc {
  _id: string | number;
  seq: number;
  deleted?: boolean;
  /** Unix ms of the soft delete (the sweep removes documents deleted long ago). */
  deletedAt?: number;
}

export interface AccountDoc extends SyncedDoc {
  _id: number;
  name: string;
  displayName: string;
  requestsPerSecond: number;
  /** Its own input rate (bytes a second); absent or null: `limits.inputBytesPerSecondPerAccount`. */
  inputBytesPerSecond?: number | null;
  blocked: boolean;
  budgets: Budget[];
  createdAt: number;
}

export interface UserDoc {
  _id: string;
  /** Lower-cased. */
  email: string;
  /** `scrypt$...` (passwords.ts). */
  passwordHash: string;
  operator: boolean;
  createdAt: number;
}

export interface MemberDoc {
  /** `<accountId>:<userId>`: one membership per person and account. */
  _id: string;
  accountId: number;
  userId: string;
  role: MemberRole;
}

export interface SessionDoc {
  /** sha256 (hex) of the session ID in the cookie: a stolen database holds no usable session. */
  _id: string;
  userId: string;
  csrf: string;
  createdAt: number;
  expiresAt: number;
  lastSeenAt: number;
  userAgent: string;
  /**
   * The session's current account (its ID): the one account the session acts for on the platform's
   * model and data APIs, as an API key of that account would. Set at sign-in to the person's first
   * membership, changed with `PUT /api/platformcore/auth/session`; absent when there is none.
   */
  account?: number;
}

/** Counters: `seq` (the change feed), `accountId`, `serviceId` (above the config file's largest ID). */
export interface MetaDoc {
  _id: string;
  n: number;
}

const bySeq = { name: 'seq', fields: ['seq'] } as const;

export const ACCOUNTS: CollectionSpec = { name: 'us_accounts', indexes: [bySeq, { name: 'name', fields: ['name'], unique: true }] };
export const USERS: CollectionSpec = { name: 'us_users', indexes: [{ name: 'email', fields: ['email'], unique: true }] };
export const MEMBERS: CollectionSpec = {
  name: 'us_members',
  indexes: [
    { name: 'accountId', fields: ['accountId'] },
    { name: 'userId', fields: ['userId'] },
  ],
};
export const SESSIONS: CollectionSpec = {
  name: 'us_sessions',
  indexes: [
    { name: 'userId', fields: ['userId'] },
    { name: 'expiresAt', fields: ['expiresAt'] },
  ],
};
export const KEYS: CollectionSpec = {
  name: 'us_keys',
  indexes: [bySeq, { name: 'keyHash', fields: ['keyHash'], unique: true }, { name: 'accountId', fields: ['accountId'] }],
};
export const SERVICES: CollectionSpec = {
  name: 'us_services',
  indexes: [
    bySeq,
    { name: 'accountId', fields: ['accountId'] },
    // `<accountId>/<name>` while the service exists (unset on removal): names unique per account (core/userspace/services.ts).
    { name: 'nameKey', fields: ['nameKey'], unique: true },
  ],
};
/** One claim per service alias (`_id`: the alias): aliases unique across every stored service. */
export const SERVICE_ALIASES: CollectionSpec = { name: 'us_service_aliases', indexes: [] };
export const META: CollectionSpec = { name: 'us_meta', indexes: [] };
