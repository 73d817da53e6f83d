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
  /** A stored key's ID (`key_…`); config-file keys have none. */
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

/** One secret of a stored key (its current one, and its previous one during a rotation's grace). */
export interface KeySecret {
  readonly hash: string;
  readonly caller: Caller;
}

/** A service as the pipeline and the Gate see it: from config, or derived at run time (fitting). */
export interface ServiceEntry extends ServiceConfig {
  readonly account: AccountConfig;
  /** For a derived (fitted) service: the service whose instances serve it, and its model directory. */
  readonly base?: { readonly serviceId: number; readonly modelDir: string; readonly ready: boolean };
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
  /** Stored keys (user space): their secrets' hashes by key ID, to replace or remove them when they change. */
  readonly #storedKeys = new Map<string, readonly KeySecret[]>();
  readonly #servicesById = new Map<number, ServiceEntry>();
  readonly #servicesByName = new Map<string, ServiceEntry>();
  readonly #servicesByToken = new SecretIndex<ServiceEntry>();
  readonly #servicesByAlias = new Map<string, ServiceEntry>();

  constructor(config: GatewayConfig) {
    for (const account of config.accounts) {
      this.#accountsById.set(account.id, account);
      this.#accountsByName.set(account.name, account);
    }
    for (const key of config.apiKeys) {
      const account = this.#accountsById.get(key.accountId);
      if (account) this.#keys.add(key.keyHash, { account, keyName: key.name, permissions: new Set(key.permissions), followTraceSampling: key.followTraceSampling === true });
    }
    for (const service of config.services) {
      const account = this.#accountsById.get(service.accountId);
      if (account) this.addService({ ...service, account });
    }
  }

  addService(entry: ServiceEntry): void {
    this.#servicesById.set(entry.id, entry);
    this.#servicesByName.set(`${entry.accountId}/${entry.name}`, entry);
    for (const hash of entry.connectionTokenHashes) this.#servicesByToken.add(hash, entry);
    for (const alias of entry.aliases ?? []) this.#servicesByAlias.set(alias, entry);
  }

  removeService(id: number): void {
    const entry = this.#servicesById.get(id);
    if (!entry) return;
    this.#servicesById.delete(id);
    this.#servicesByName.delete(`${entry.accountId}/${entry.name}`);
    for (const hash of entry.connectionTokenHashes) this.#servicesByToken.delete(hash);
    for (const alias of entry.aliases ?? []) if (this.#servicesByAlias.get(alias) === entry) this.#servicesByAlias.delete(alias);
  }

  /**
   * Puts a stored key's secrets in place of what it had (a rotation adds the new secret and keeps the
   * old one until its grace ends; the change feed calls this on every gateway).
   */
  setKey(keyId: string, secrets: readonly KeySecret[]): void {
    this.removeKey(keyId);
    for (const secret of secrets) this.#keys.add(secret.hash, secret.caller);
    this.#storedKeys.set(keyId, secrets);
  }

  /** Forgets a stored key (revoked or deleted): its secrets are refused from now on. */
  removeKey(keyId: string): void {
    for (const secret of this.#storedKeys.get(keyId) ?? []) this.#keys.delete(secret.hash);
    this.#storedKeys.delete(keyId);
  }

  /** A stored key's current caller (budgets debited after an answer), by key ID. */
  storedKey(keyId: string): Caller | undefined {
    return this.#storedKeys.get(keyId)?.[0]?.caller;
  }

  /** How many stored keys this gateway knows. */
  get storedKeyCount(): number {
    return this.#storedKeys.size;
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
