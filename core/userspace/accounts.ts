/**
 * Accounts: the config file's (read-only, `source: 'config'`) and the stored ones (`us_accounts`,
 * synced to every gateway's Directory through the change feed). Stored accounts take IDs above the
 * config file's largest.
 */
import type { AccountConfig, GatewayConfig } from '../config/types.js';
import type { Directory } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import { isDuplicateKey, type Collection } from '../storage/port.js';
import type { SyncedCollection, SyncedKind } from './change-feed.js';
import { ACCOUNTS, type AccountDoc, type Budget, type MetaDoc } from './collections.js';
import { nextNumber } from './counters.js';

export type Source = 'config' | 'stored';

export interface AccountView {
  id: number;
  name: string;
  displayName: string;
  requestsPerSecond: number;
  /** Its own input rate; null: the gateway's `limits.inputBytesPerSecondPerAccount`. */
  inputBytesPerSecond: number | null;
  blocked: boolean;
  budgets: Budget[];
  source: Source;
}

export interface AccountChanges {
  name?: string;
  displayName?: string;
  requestsPerSecond?: number;
  /** null: back to the gateway's default. */
  inputBytesPerSecond?: number | null;
  blocked?: boolean;
  budgets?: Budget[];
}

/** Applies stored accounts to a Directory; config accounts are never touched by a stored document. */
export function accountKind(directory: Directory, configIds: ReadonlySet<number>): SyncedKind<AccountDoc> {
  return {
    spec: ACCOUNTS,
    apply(doc) {
      if (configIds.has(doc._id)) return;
      if (doc.deleted) directory.removeAccount(doc._id);
      else
        directory.putAccount({
          id: doc._id,
          name: doc.name,
          requestsPerSecond: doc.requestsPerSecond,
          ...(doc.inputBytesPerSecond ? { inputBytesPerSecond: doc.inputBytesPerSecond } : {}),
          blocked: doc.blocked,
          budgets: doc.budgets,
        });
    },
  };
}

export class Accounts {
  readonly #stored: SyncedCollection<AccountDoc>;
  readonly #meta: Collection<MetaDoc>;
  readonly #config: GatewayConfig;
  readonly #directory: Directory;
  readonly #configIds: ReadonlySet<number>;

  constructor(stored: SyncedCollection<AccountDoc>, meta: Collection<MetaDoc>, config: GatewayConfig, directory: Directory) {
    this.#stored = stored;
    this.#meta = meta;
    this.#config = config;
    this.#directory = directory;
    this.#configIds = new Set(config.accounts.map((a) => a.id));
  }

  isConfig(id: number): boolean {
    return this.#configIds.has(id);
  }

  /** Every account, config ones first, each in ID order. */
  async list(): Promise<AccountView[]> {
    const stored = await this.#stored.collection.find({ deleted: { $ne: true } });
    return [...this.#config.accounts.map(configView), ...stored.map(storedView)];
  }

  /** The account `ref` (ID or name) names, as this gateway knows it; undefined when none. */
  async find(ref: string | number): Promise<AccountView | undefined> {
    const known = this.#directory.findAccount(ref);
    if (!known) return undefined;
    if (this.#configIds.has(known.id)) return configView(this.#config.accounts.find((a) => a.id === known.id)!);
    const doc = await this.#stored.collection.get(known.id);
    return doc && !doc.deleted ? storedView(doc) : undefined;
  }

  async create(input: Required<Pick<AccountChanges, 'name'>> & AccountChanges): Promise<AccountView> {
    this.#refuseConfigName(input.name);
    const id = await nextNumber(this.#meta, 'accountId', Math.max(0, ...this.#configIds));
    try {
      const doc = await this.#stored.insert({
        _id: id,
        name: input.name,
        displayName: input.displayName ?? input.name,
        requestsPerSecond: input.requestsPerSecond ?? this.#config.limits.defaultRequestsPerSecond,
        ...(input.inputBytesPerSecond ? { inputBytesPerSecond: input.inputBytesPerSecond } : {}),
        blocked: input.blocked ?? false,
        budgets: input.budgets ?? [],
        createdAt: Date.now(),
      });
      return storedView(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw nameTaken(input.name);
      throw err;
    }
  }

  /** Changes a stored account (409 CONFIG_ENTRY_READ_ONLY for a config one). */
  async update(account: AccountView, changes: AccountChanges): Promise<AccountView> {
    if (account.source === 'config') throw gatewayError('CONFIG_ENTRY_READ_ONLY', { args: { entity: 'Account', name: account.name } });
    if (changes.name !== undefined && changes.name !== account.name) this.#refuseConfigName(changes.name);
    const $set = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    try {
      const doc = await this.#stored.update({ _id: account.id, deleted: { $ne: true } }, { $set });
      if (!doc) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'account', id: account.id } });
      return storedView(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw nameTaken(changes.name ?? account.name);
      throw err;
    }
  }

  #refuseConfigName(name: string): void {
    if (this.#config.accounts.some((a) => a.name === name)) throw nameTaken(name);
  }
}

const nameTaken = (name: string) =>
  gatewayError('CONFLICT', { param: 'name', args: { reason: `An account named '${name}' already exists` } });

function configView(account: AccountConfig): AccountView {
  return {
    id: account.id,
    name: account.name,
    displayName: account.name,
    requestsPerSecond: account.requestsPerSecond,
    inputBytesPerSecond: account.inputBytesPerSecond ?? null,
    blocked: account.blocked,
    budgets: [],
    source: 'config',
  };
}

function storedView(doc: AccountDoc): AccountView {
  return {
    id: doc._id,
    name: doc.name,
    displayName: doc.displayName,
    requestsPerSecond: doc.requestsPerSecond,
    inputBytesPerSecond: doc.inputBytesPerSecond ?? null,
    blocked: doc.blocked,
    budgets: doc.budgets,
    source: 'stored',
  };
}
