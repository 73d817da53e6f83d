/**
 * Services stored through the user-space API (`us_services`), on the store port so that every store
 * home keeps them. Every write stamps a fresh `seq` (the change feed every gateway follows) and is a
 * compare-and-set on the document's previous `seq`, so two writers never overwrite each other
 * silently. A removal is soft (`deleted: true`) so the other gateways see it. Names are unique per
 * account by a unique index, aliases across the store by one claim document each
 * (`us_service_aliases`): the port has no multi-document transactions.
 */
import { randomBytes } from 'node:crypto';
import { hashSecret } from '../admission/secret-hashes.js';
import { normaliseService } from '../config/service-config.js';
import type { AccountConfig } from '../config/types.js';
import type { ServiceEntry } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import { isDuplicateKey, type Collection, type Doc } from '../storage/port.js';
import type { SyncedCollection } from './change-feed.js';
import type { MetaDoc, SyncedDoc } from './collections.js';
import { nextNumber } from './counters.js';
import type { ServiceDefinition, TokenChanges } from './service-input.js';

/** A connection token: only its hash is kept; `prefix` (its first characters) tells tokens apart. */
export interface ConnectionTokenRecord {
  id: string;
  prefix: string;
  tokenHash: string;
  createdAt: number;
}

export interface StoredServiceDoc extends SyncedDoc {
  _id: number;
  accountId: number;
  /** The config-file fields of the service, defaults filled in (`upstream.apiKey` included). */
  definition: ServiceDefinition;
  connectionTokens: ConnectionTokenRecord[];
  nameKey?: string;
  createdAt: number;
  updatedAt: number;
}

export interface AliasClaim extends Doc {
  _id: string;
  serviceId: number;
}

/** A write's result: the document as written, and the connection token made by it (shown once). */
export interface ServiceWrite {
  readonly doc: StoredServiceDoc;
  readonly connectionToken?: { readonly id: string; readonly token: string };
}

/** Connection tokens one service may have at once. */
const MAX_CONNECTION_TOKENS = 16;

export class StoredServices {
  readonly #services: SyncedCollection<StoredServiceDoc>;
  readonly #aliases: Collection<AliasClaim>;
  readonly #meta: Collection<MetaDoc>;
  /** Stored services take IDs above the config file's largest. */
  readonly #idFloor: number;
  readonly #now: () => number;

  constructor(
    services: SyncedCollection<StoredServiceDoc>,
    aliases: Collection<AliasClaim>,
    meta: Collection<MetaDoc>,
    idFloor: number,
    now: () => number = Date.now,
  ) {
    this.#services = services;
    this.#aliases = aliases;
    this.#meta = meta;
    this.#idFloor = idFloor;
    this.#now = now;
  }

  /** The account's stored services that exist (not removed). */
  list(accountId: number): Promise<StoredServiceDoc[]> {
    return this.#services.collection.find({ accountId, deleted: { $ne: true } });
  }

  async get(id: number): Promise<StoredServiceDoc | undefined> {
    const doc = await this.#services.collection.get(id);
    return doc && !doc.deleted ? doc : undefined;
  }

  /** The account's stored service named `name`, if it exists. */
  async byName(accountId: number, name: string): Promise<StoredServiceDoc | undefined> {
    return (await this.#services.collection.findOne({ nameKey: nameKey(accountId, name) })) ?? undefined;
  }

  /** Stores a new service; 409 SERVICE_NAME_TAKEN or SERVICE_ALIAS_TAKEN when another holds either. */
  async create(
    accountId: number,
    definition: ServiceDefinition,
    tokens: TokenChanges,
    isFreeId: (id: number) => boolean,
  ): Promise<ServiceWrite> {
    let id: number;
    do id = await nextNumber(this.#meta, 'serviceId', this.#idFloor);
    while (!isFreeId(id));
    const made = tokens.newConnectionToken ? newConnectionToken(this.#now()) : undefined;
    const aliases = aliasesOf(definition);
    await this.#claimAliases(id, aliases);
    const now = this.#now();
    const doc: Omit<StoredServiceDoc, 'seq'> = {
      _id: id,
      accountId,
      definition,
      connectionTokens: made ? [made.record] : [],
      nameKey: nameKey(accountId, definition.name),
      createdAt: now,
      updatedAt: now,
    };
    let written: StoredServiceDoc;
    try {
      written = await this.#services.insert(doc);
    } catch (err) {
      await this.#releaseAliases(id, aliases);
      throw isDuplicateKey(err) ? nameTaken(definition.name) : err;
    }
    return { doc: written, connectionToken: made && { id: made.record.id, token: made.token } };
  }

  /**
   * Writes a changed definition over `current`, which must still be the stored version (another
   * writer meanwhile: 409 CONFLICT, read it again).
   */
  async update(current: StoredServiceDoc, definition: ServiceDefinition, tokens: TokenChanges): Promise<ServiceWrite> {
    const unknown = tokens.revokeConnectionTokens.filter((id) => !current.connectionTokens.some((t) => t.id === id));
    if (unknown.length)
      throw gatewayError('VALIDATION_FAILED', {
        param: 'revokeConnectionTokens',
        args: { reason: `revokeConnectionTokens: the service has no connection token ${unknown.join(', ')}` },
      });
    const made = tokens.newConnectionToken ? newConnectionToken(this.#now()) : undefined;
    const connectionTokens = [
      ...current.connectionTokens.filter((t) => !tokens.revokeConnectionTokens.includes(t.id)),
      ...(made ? [made.record] : []),
    ];
    if (connectionTokens.length > MAX_CONNECTION_TOKENS) {
      throw gatewayError('VALIDATION_FAILED', {
        param: 'newConnectionToken',
        args: { reason: `a service has at most ${MAX_CONNECTION_TOKENS} connection tokens: revoke one first` },
      });
    }
    const before = aliasesOf(current.definition);
    const after = aliasesOf(definition);
    const added = after.filter((a) => !before.includes(a));
    await this.#claimAliases(current._id, added);
    let written: StoredServiceDoc | null;
    try {
      written = await this.#services.update(
        { _id: current._id, seq: current.seq, deleted: { $ne: true } },
        {
          $set: {
            definition,
            connectionTokens,
            nameKey: nameKey(current.accountId, definition.name),
            updatedAt: this.#now(),
          },
        },
      );
    } catch (err) {
      await this.#releaseAliases(current._id, added);
      throw isDuplicateKey(err) ? nameTaken(definition.name) : err;
    }
    if (!written) {
      await this.#releaseAliases(current._id, added);
      throw gatewayError('CONFLICT', {
        args: { reason: `Service '${current.definition.name}' was changed or removed meanwhile: read it again` },
      });
    }
    await this.#releaseAliases(
      current._id,
      before.filter((a) => !after.includes(a)),
    );
    return { doc: written, connectionToken: made && { id: made.record.id, token: made.token } };
  }

  /** Removes the service (soft: the other gateways read the removal from the change feed). */
  async remove(current: StoredServiceDoc): Promise<void> {
    const written = await this.#services.update(
      { _id: current._id, deleted: { $ne: true } },
      { $set: { deleted: true, deletedAt: this.#now(), updatedAt: this.#now() }, $unset: ['nameKey'] },
    );
    if (written) await this.#releaseAliases(current._id, aliasesOf(written.definition));
  }

  /**
   * Claims each alias for the service. A claim left by a service that no longer has the alias (a
   * gateway that stopped between two writes) is taken over.
   */
  async #claimAliases(serviceId: number, aliases: readonly string[]): Promise<void> {
    const claimed: string[] = [];
    try {
      for (const alias of aliases) {
        if (!(await this.#claim(serviceId, alias))) throw aliasTaken(alias);
        claimed.push(alias);
      }
    } catch (err) {
      await this.#releaseAliases(serviceId, claimed);
      throw err;
    }
  }

  async #claim(serviceId: number, alias: string): Promise<boolean> {
    try {
      await this.#aliases.insert({ _id: alias, serviceId });
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const holder = await this.#aliases.get(alias);
    if (!holder || holder.serviceId === serviceId) return holder !== null || this.#claim(serviceId, alias);
    const owner = await this.#services.collection.get(holder.serviceId);
    if (owner && !owner.deleted && aliasesOf(owner.definition).includes(alias)) return false;
    return (await this.#aliases.findOneAndUpdate({ _id: alias, serviceId: holder.serviceId }, { $set: { serviceId } })) !== null;
  }

  async #releaseAliases(serviceId: number, aliases: readonly string[]): Promise<void> {
    for (const alias of aliases) await this.#aliases.deleteMany({ _id: alias, serviceId });
  }
}

/** The Directory entry of a stored service. */
export function storedServiceEntry(doc: StoredServiceDoc, account: AccountConfig): ServiceEntry {
  const item = { ...doc.definition, id: doc._id, connectionTokens: doc.connectionTokens.map((t) => ({ tokenHash: t.tokenHash })) };
  return { ...normaliseService(item, account.id), account };
}

export function aliasesOf(definition: ServiceDefinition): string[] {
  return Array.isArray(definition.aliases) ? (definition.aliases as string[]) : [];
}

const nameKey = (accountId: number, name: string) => `${accountId}/${name}`;

const nameTaken = (name: string) => gatewayError('SERVICE_NAME_TAKEN', { param: 'name', args: { name } });
const aliasTaken = (alias: string) => gatewayError('SERVICE_ALIAS_TAKEN', { param: 'aliases', args: { alias } });

function newConnectionToken(now: number): { token: string; record: ConnectionTokenRecord } {
  const token = `svc_${randomBytes(32).toString('base64url')}`;
  return {
    token,
    record: { id: `ct_${randomBytes(8).toString('hex')}`, prefix: token.slice(0, 12), tokenHash: hashSecret(token), createdAt: now },
  };
}
