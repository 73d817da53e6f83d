import type { StageObserver } from '../observe/request-trace.js';
import type { Permission } from '../config/types.js';
import type { Caller, Directory, ServiceEntry } from './directory.js';
import { gatewayError, type GatewayError } from '../errors.js';
import { StorageQuota, type StorageMeter } from './quotas/storage-quota.js';
import { StreamQuota } from './quotas/stream-quota.js';
import type { RequestLimiter } from './request-rate/local-rate-limiter.js';
import type { BudgetGate } from '../userspace/budgets.js';

export interface AdmitRequest {
  /** The credential as received; undefined or empty when the caller sent none. */
  apiKey: string | undefined;
  /** Where the key was expected, for the 401 message (`PLATFORM-API-KEY`, `Authorization`, `authToken`). */
  keyHeader: string;
  /** The caller of a request without a key, from another credential (see `authenticate`). */
  resolved?: Caller;
  permission: Permission;
  /** The service owner, by ID or name. */
  account: string | number;
  /** The service, by ID or name. */
  model: string | number;
}

export interface Admitted {
  caller: Caller;
  service: ServiceEntry;
}

/** A service as the caller addressed it (account and service by ID or name): named in a refusal instead of the service's own names. */
export interface ServiceRef {
  account: string | number;
  model: string | number;
}

/**
 * Checks a predict config before dispatch (registry validation). `modelName` is the registry model the
 * request names; when absent the service's default model applies. Throws a 400 GatewayError.
 */
export interface ConfigValidator {
  validate(service: ServiceEntry, config: unknown, modelName?: string): void;
}

/**
 * The one place where a call's checks are made, for every interface: the platform API and the chat,
 * Responses, Messages, direct and audio adapters (through core/admission/http-middleware.ts) and the
 * gRPC client calls and speech streams (`admit`). In this order:
 * authenticate (401; an expired key, or a rotated one past its grace, too; a request without a key may be
 * a console session's, resolved by the credential a plugin registered, then checked from here on as a key) → blocked account (402) → key
 * permission (403) → rate limit of the account, then of the key (429) → resolve account and service
 * (400; an adapter resolves its `model` itself) → access to the service (403, or the interface's own
 * refusal; the platform API's account routes: own account, 403), the key's services list (403) → budgets
 * of the account and the key (402, or the interface's own refusal) → validate the config (400).
 * Checks on the caller belong in `authenticate` and `countRequest`; checks that need the call's service
 * (access, the key's services list, budgets: checked once the call is known, so a request refused
 * earlier costs no budget check) in `checkAccess` (and `checkOwnAccount`). Everything here is in memory:
 * no store call per request. Nothing outside this class decides whether a caller may call.
 */
export class Pipeline {
  readonly #directory: Directory;
  readonly #rateLimiter: RequestLimiter;
  readonly #validators: ConfigValidator[] = [];
  readonly #streams: StreamQuota;
  readonly #storage: StorageQuota;
  /** Tracing's view of the stages; undefined (one check per stage) when tracing is off. */
  #stages: StageObserver | undefined = undefined;
  /** Budgets of accounts and keys (core/userspace/budgets.ts); undefined: none are checked. */
  #budgets: BudgetGate | undefined = undefined;

  constructor(
    directory: Directory,
    rateLimiter: RequestLimiter,
    quotas: { concurrentStreamsPerAccount?: number; storageBytesPerAccount?: number } = {},
  ) {
    this.#directory = directory;
    this.#rateLimiter = rateLimiter;
    this.#streams = new StreamQuota(quotas.concurrentStreamsPerAccount ?? 32);
    this.#storage = new StorageQuota(quotas.storageBytesPerAccount ?? 256 * 1024 * 1024);
  }

  /** Adds a kind of stored data to the per-account storage quota (core meters async tasks; fitting, datasets). */
  addStorageMeter(meter: StorageMeter): void {
    this.#storage.addMeter(meter);
  }

  /** Throws 413 STORAGE_QUOTA_EXCEEDED when the caller's account may not store `adding` more bytes. */
  checkStorage(caller: Caller, adding: number): Promise<void> {
    return this.#storage.check(caller, adding);
  }

  /** Bytes the account keeps stored, over every meter. */
  storedBytes(accountId: number): Promise<number> {
    return this.#storage.used(accountId);
  }

  /**
   * Takes one of the caller's concurrent-stream slots (429 TOO_MANY_CONCURRENT_STREAMS when all are
   * held); call the returned release when the stream ends, however it ends.
   */
  openStream(caller: Caller): () => void {
    return this.#streams.acquire(caller);
  }

  get directory(): Directory {
    return this.#directory;
  }

  /** Reports each request's admission and validation stages to `observer` (tracing). */
  observeStages(observer: StageObserver): void {
    this.#stages = observer;
  }

  /** Checks budgets before dispatch (the gate is debited after answers by its owner). */
  useBudgets(budgets: BudgetGate): void {
    this.#budgets = budgets;
  }

  addValidator(validator: ConfigValidator): void {
    this.#validators.push(validator);
  }

  /**
   * The caller behind an API key, after the key, blocked-account and permission checks. `resolved` is
   * the caller of a request that sent no key, resolved by a credential a plugin registered
   * (`Admission.useCredential`: a console session); it takes the checks that follow the key's.
   */
  authenticate(apiKey: string | undefined, keyHeader: string, permission: Permission, resolved?: Caller): Caller {
    this.#stages?.enter('admission');
    const caller = resolved ?? this.#keyCaller(apiKey, keyHeader);
    if (caller.account.blocked) throw gatewayError('ACCOUNT_BLOCKED', { args: { account: caller.account.name } });
    this.requirePermission(caller, permission);
    return caller;
  }

  /** The caller of a live API key: 401 for none, for an unknown one, and for an expired one. */
  #keyCaller(apiKey: string | undefined, keyHeader: string): Caller {
    if (!apiKey) throw gatewayError('API_KEY_MISSING', { args: { header: keyHeader } });
    const caller = this.#directory.callerForKey(apiKey);
    // An expired key, or a rotated one past its grace, is unknown to the caller: it says no more why.
    if (!caller || (caller.validUntil !== undefined && Date.now() >= caller.validUntil)) throw gatewayError('API_KEY_INVALID');
    return caller;
  }

  /** 403 TOKEN_PERMISSION_REQUIRED unless the caller's key has `permission`. */
  requirePermission(caller: Caller, permission: Permission): void {
    if (!caller.permissions.has(permission)) throw gatewayError('TOKEN_PERMISSION_REQUIRED', { args: { permission } });
  }

  /** Counts one request against the caller's requests-per-second setting. */
  countRequest(caller: Caller): void {
    const limit = caller.account.requestsPerSecond;
    if (!this.#rateLimiter.tryTake(caller.account.id, limit)) {
      throw gatewayError('RATE_LIMIT_EXCEEDED', { args: { account: caller.account.name, limit } });
    }
    const own = caller.requestsPerSecond;
    if (own !== undefined && caller.keyId !== undefined && !this.#rateLimiter.tryTake(caller.keyId, own)) {
      throw gatewayError('KEY_RATE_LIMIT_EXCEEDED', { args: { key: caller.keyName, limit: own } });
    }
  }

  /**
   * Whether the caller may call the service: the access rule (the owner may call its services, other
   * accounts only public ones) and the key's services allow-list. Lists of services (the chat
   * adapters' models, health, hints) show only these, so a key never sees what it would be refused.
   */
  mayCall(caller: Caller, service: ServiceEntry): boolean {
    return opensTo(caller, service) && keyAllows(caller, service);
  }

  /**
   * Throws unless `mayCall`. The refusal keeps the spec's 403 but names the service only as the
   * caller addressed it (`ref`): a caller sweeping IDs learns no names of private or derived services
   * it may not see. An interface with its own answer for a service the caller may not see passes
   * `denied` (the chat adapters' 404 MODEL_NOT_FOUND, as for an unknown model), and for a spent budget
   * `overBudget` (the chat adapters' 429 insufficient_quota). Then the key's services list and the
   * budgets of the account and the key.
   */
  checkAccess(
    caller: Caller,
    service: ServiceEntry,
    ref: ServiceRef = { account: service.accountId, model: service.id },
    denied?: () => GatewayError,
    overBudget?: (err: GatewayError) => GatewayError,
  ): void {
    if (!opensTo(caller, service)) {
      throw (
        denied?.() ?? gatewayError('ACCESS_TO_ANOTHER_ACCOUNT_NOT_PUBLIC_DENIED', { args: { account: ref.account, service: ref.model } })
      );
    }
    if (!keyAllows(caller, service)) {
      throw gatewayError('API_KEY_SERVICE_NOT_ALLOWED', { args: { key: caller.keyName, service: ref.model } });
    }
    // Checked before the call, with the service known (a budget refusal names the budget, never the key).
    const spent = this.#budgets?.spent(caller);
    if (spent) {
      const err = gatewayError('BUDGET_EXCEEDED', { args: { ...spent } });
      throw overBudget?.(err) ?? err;
    }
  }

  /** 403 ACCESS_TO_ANOTHER_ACCOUNT_DENIED unless the account the caller named (by ID or name) is its own: the platform API's account-scoped routes. */
  checkOwnAccount(caller: Caller, account: string): void {
    if (this.#directory.findAccount(account)?.id !== caller.account.id) {
      throw gatewayError('ACCESS_TO_ANOTHER_ACCOUNT_DENIED', { args: { account } });
    }
  }

  /** Every stage up to (not including) validation, for a request addressed to one service. */
  admit(request: AdmitRequest): Admitted {
    const caller = this.authenticate(request.apiKey, request.keyHeader, request.permission, request.resolved);
    this.countRequest(caller);
    const service = this.#directory.service(request.account, request.model);
    this.checkAccess(caller, service, request);
    return { caller, service };
  }

  /** Runs the registry validators over a predict config. */
  validateConfig(service: ServiceEntry, config: unknown, modelName?: string): void {
    this.#stages?.enter('validation');
    for (const validator of this.#validators) validator.validate(service, config, modelName);
  }

  /**
   * The predict config a request sends, validated: the caller's own (`own`, parsed; `text` is its text
   * when it came as a string, sent as given), else the named config `configId`, else the service's
   * default named config. `json` is the text to send; both are undefined when there is no config.
   */
  predictConfig(
    service: ServiceEntry,
    own: unknown,
    options: { text?: string; configId?: string } = {},
  ): { value: unknown; json: string | undefined } {
    if (own !== undefined && own !== null) {
      this.validateConfig(service, own);
      return { value: own, json: options.text ?? JSON.stringify(own) };
    }
    const named = this.namedConfig(service, options.configId);
    this.validateConfig(service, named);
    return { value: named, json: named && namedConfigJson(named) };
  }

  /** The ID a caller passes as `configId` resolved to the service's named config (400 when unknown). */
  namedConfig(service: ServiceEntry, configId: string | number | undefined): Readonly<Record<string, unknown>> | undefined {
    if (configId === undefined || configId === '') return service.configs.find((c) => c.default)?.config;
    const found = service.configs.find((c) => String(c.id) === String(configId));
    if (!found) throw gatewayError('UNKNOWN_CONFIG_ID', { args: { configId }, param: 'configId' });
    return found.config;
  }
}

/** Named configs are frozen config objects: each is serialised once. */
const serialised = new WeakMap<object, string>();

function namedConfigJson(config: Readonly<Record<string, unknown>>): string {
  let json = serialised.get(config);
  if (json === undefined) serialised.set(config, (json = JSON.stringify(config)));
  return json;
}

/** The access rule: the owner may call its services; other accounts only public ones. */
function opensTo(caller: Caller, service: ServiceEntry): boolean {
  return service.public || service.accountId === caller.account.id;
}

/** The key's services allow-list (none: every service the access rule opens). */
function keyAllows(caller: Caller, service: ServiceEntry): boolean {
  return !caller.services || caller.services.has(service.id);
}
