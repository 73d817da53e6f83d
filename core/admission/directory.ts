import { SecretIndex } from './secret-hashes.js';
import type { AccountConfig, GatewayConfig, Permission, ServiceConfig } from '../config/types.js';
import { gatewayError } from '../errors.js';
import type { Budget } from '../userspace/budgets.js';

export interface Caller {
  readonly account: AccountConfig;
  readonly keyName: string;
  readonly permissions: ReadonlySet<Permission>;
  /** The key's `followTraceSampling`: its requests' W3C sampled flag decides whether they are traced. */
  readonly followTraceSampling?: boolean;
  /** A stored key's ID (`key_…`); config-file keys have none; a console session's caller has `console:<email>` (the key of its spend rows). */
  readonly keyId?: string;
  /** Epoch ms from which this secret is refused: the key's expiry, or the end of a rotation's grace. */
  readonly validUntil?: number;
  /** The services (IDs) the key may call; undefined: every service its account may call. */
  readonly services?: ReadonlySet<number>;
  /** The key's own requests-per-second limit, under its account's. */
  readonly requestsPerSecond?: number;
  /** The key's own spending limits, besides its account's. */
  readonly budgets?: readonly Budget[];
}

/** A service as the pipeline and the Gate see it: from config, or derived at run time (fitting). */
export interface ServiceEntry extends ServiceConfig {
  readonly account: AccountConfig;
  /** For a derived (fitted) service: the service whose instances serve it, and its model directory. */
  readonly base?: { readonly serviceId: number; readonly modelDir: string; readonly ready: boolean };
}

/**
 * A service added (`before` undefined), replaced or removed (`after` undefined) at run time, for the
 * parts that keep something per service: the Gate's instances, the upstream connector's engines.
 */
export interface ServiceChange {
  readonly id: number;
  readonly before?: ServiceEntry;
  readonly after?: ServiceEntry;
}

/**
 * One API key as the directory holds it: its secret hashes and how to make its caller for its account
 * (called again when the account is replaced). Config keys have IDs `config:<index>`.
 */
export interface KeyEntry {
  readonly id: string;
  readonly accountId: number;
  readonly hashes: readonly string[];
  /** The caller behind one of its hashes (a rotated key's previous secret has its own end of validity). */
  caller(account: AccountConfig, hash: string): Caller;
}

const isId = (ref: string | number): boolean => typeof ref === 'number' || /^\d+$/.test(ref);

/**
 * Accounts, API keys and services, resolvable by ID or by name (a reference made only of digits is an
 * ID, any other is a name). Built from config at boot; derived services are added at run time.
 */
export class Directory {
  readonly #accountsById = new Map<number, AccountConfig>();
  readonly #accountsByName = new Map<string, AccountConfig>();
  /** The caller behind each API key, built once: a request looks it up and allocates nothing. */
  readonly #keys = new SecretIndex<Caller>();
  /** Each key entry by its ID, so that it can be replaced, removed, or rebuilt when its account changes. */
  readonly #keyEntries = new Map<string, KeyEntry>();
  /** The key IDs of each account: an account change rebuilds only its own keys (of 100,000). */
  readonly #keysByAccount = new Map<number, Set<string>>();
  readonly #servicesById = new Map<number, ServiceEntry>();
  readonly #servicesByName = new Map<string, ServiceEntry>();
  readonly #servicesByToken = new SecretIndex<ServiceEntry>();
  readonly #servicesByAlias = new Map<string, ServiceEntry>();
  readonly #serviceListeners = new Set<(change: ServiceChange) => void>();

  constructor(config: GatewayConfig) {
    for (const account of config.accounts) this.putAccount(account);
    config.apiKeys.forEach((key, i) => {
      const followTraceSampling = key.followTraceSampling === true;
      const permissions = new Set(key.permissions);
      this.putKey({
        id: `config:${i}`,
        accountId: key.accountId,
        hashes: [key.keyHash],
        caller: (account) => ({ account, keyName: key.name, permissions, followTraceSampling }),
      });
    });
    for (const service of config.services) {
      const account = this.#accountsById.get(service.accountId);
      if (account) this.addService({ ...service, account });
    }
  }

  /**
   * Adds an account, or replaces the one with its ID (stored accounts change at run time: core/userspace):
   * its keys' callers and its services are rebuilt on the new one, so `blocked` and the rate apply at once.
   */
  putAccount(account: AccountConfig): void {
    const previous = this.#accountsById.get(account.id);
    if (previous && this.#accountsByName.get(previous.name) === previous) this.#accountsByName.delete(previous.name);
    this.#accountsById.set(account.id, account);
    this.#accountsByName.set(account.name, account);
    // Keys applied before their account (the feed's order) become callable now; a replaced account's are rebuilt.
    for (const id of [...(this.#keysByAccount.get(account.id) ?? [])]) this.putKey(this.#keyEntries.get(id)!);
    if (!previous) return;
    for (const service of [...this.#servicesById.values()]) if (service.accountId === account.id) this.addService({ ...service, account });
  }

  /** Removes an account with its keys and services. */
  removeAccount(id: number): void {
    const account = this.#accountsById.get(id);
    if (!account) return;
    for (const keyId of [...(this.#keysByAccount.get(id) ?? [])]) this.removeKey(keyId);
    for (const service of [...this.#servicesById.values()]) if (service.accountId === id) this.removeService(service.id);
    this.#accountsById.delete(id);
    if (this.#accountsByName.get(account.name) === account) this.#accountsByName.delete(account.name);
  }

  /**
   * Adds a key, or replaces the one with its ID. Every hash in `hashes` finds the caller (a rotated key's
   * previous secret during its grace period). A key of an unknown account is kept and callable once the
   * account arrives (the change feed may apply a key before its account).
   */
  putKey(entry: KeyEntry): void {
    this.removeKey(entry.id);
    this.#keyEntries.set(entry.id, entry);
    let ofAccount = this.#keysByAccount.get(entry.accountId);
    if (!ofAccount) this.#keysByAccount.set(entry.accountId, (ofAccount = new Set()));
    ofAccount.add(entry.id);
    const account = this.#accountsById.get(entry.accountId);
    if (!account) return;
    for (const hash of entry.hashes) this.#keys.add(hash, entry.caller(account, hash));
  }

  /** A key's caller for its current secret, by key ID (budgets debited after an answer); undefined when unknown. */
  keyCaller(id: string): Caller | undefined {
    const entry = this.#keyEntries.get(id);
    const account = entry && this.#accountsById.get(entry.accountId);
    return entry && account && entry.caller(account, entry.hashes[0]!);
  }

  removeKey(id: string): void {
    const entry = this.#keyEntries.get(id);
    if (!entry) return;
    this.#keyEntries.delete(id);
    const ofAccount = this.#keysByAccount.get(entry.accountId);
    ofAccount?.delete(id);
    if (ofAccount?.size === 0) this.#keysByAccount.delete(entry.accountId);
    for (const hash of entry.hashes) this.#keys.delete(hash);
  }

  /** Adds a service, or replaces the one with its ID (its old name, tokens and aliases go with it). */
  addService(entry: ServiceEntry): void {
    const before = this.#unindexService(entry.id);
    this.#servicesById.set(entry.id, entry);
    this.#servicesByName.set(`${entry.accountId}/${entry.name}`, entry);
    for (const hash of entry.connectionTokenHashes) this.#servicesByToken.add(hash, entry);
    for (const alias of entry.aliases ?? []) this.#servicesByAlias.set(alias, entry);
    this.#serviceChanged({ id: entry.id, before, after: entry });
  }

  removeService(id: number): void {
    const before = this.#unindexService(id);
    if (before) this.#serviceChanged({ id, before });
  }

  /** Calls `listener` after every service added, replaced or removed; returns the unsubscribe. */
  onServiceChange(listener: (change: ServiceChange) => void): () => void {
    this.#serviceListeners.add(listener);
    return () => this.#serviceListeners.delete(listener);
  }

  #unindexService(id: number): ServiceEntry | undefined {
    const entry = this.#servicesById.get(id);
    if (!entry) return undefined;
    this.#servicesById.delete(id);
    if (this.#servicesByName.get(`${entry.accountId}/${entry.name}`) === entry)
      this.#servicesByName.delete(`${entry.accountId}/${entry.name}`);
    for (const hash of entry.connectionTokenHashes) this.#servicesByToken.delete(hash);
    for (const alias of entry.aliases ?? []) if (this.#servicesByAlias.get(alias) === entry) this.#servicesByAlias.delete(alias);
    return entry;
  }

  #serviceChanged(change: ServiceChange): void {
    for (const listener of this.#serviceListeners) listener(change);
  }

  accounts(): IterableIterator<AccountConfig> {
    return this.#accountsById.values();
  }

  /** The caller an API key belongs to, or undefined for an unknown key. */
  callerForKey(apiKey: string): Caller | undefined {
    return this.#keys.find(apiKey);
  }

  serviceForConnectionToken(token: string): ServiceEntry | undefined {
    return this.#servicesByToken.find(token);
  }

  findAccount(ref: string | number): AccountConfig | undefined {
    return isId(ref) ? this.#accountsById.get(Number(ref)) : this.#accountsByName.get(String(ref));
  }

  /** The account by ID or name; 400 ACCOUNT_NOT_FOUND otherwise. */
  account(ref: string | number): AccountConfig {
    const account = this.findAccount(ref);
    if (!account) throw gatewayError('ACCOUNT_NOT_FOUND', { args: { account: ref } });
    return account;
  }

  serviceById(id: number): ServiceEntry | undefined {
    return this.#servicesById.get(id);
  }

  findService(account: AccountConfig, ref: string | number): ServiceEntry | undefined {
    const found = isId(ref) ? this.#servicesById.get(Number(ref)) : this.#servicesByName.get(`${account.id}/${ref}`);
    return found && found.accountId === account.id ? found : undefined;
  }

  /** The service `model` of account `account`, both by ID or name; 400 as the spec says otherwise. */
  service(accountRef: string | number, modelRef: string | number): ServiceEntry {
    const account = this.account(accountRef);
    const service = this.findService(account, modelRef);
    if (!service) throw gatewayError('SERVICE_NOT_FOUND', { args: { account: accountRef, model: modelRef } });
    return service;
  }

  /** The service a slash-free alias (`services[].aliases`) names. */
  serviceByAlias(alias: string): ServiceEntry | undefined {
    return this.#servicesByAlias.get(alias);
  }

  services(): IterableIterator<ServiceEntry> {
    return this.#servicesById.values();
  }
}
