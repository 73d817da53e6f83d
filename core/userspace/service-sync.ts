/**
 * Stored services into this gateway's Directory, as the change feed brings them: added, replaced or
 * removed there, and the Gate and the upstream connector follow the Directory (core/directory.ts
 * `onServiceChange`). Applying a document is idempotent, so a trailing re-read of the feed is harmless.
 * A stored service never takes the place of a config-file or derived one (their ID, name or alias):
 * the API refuses such a write, and one that still reaches here (a config file changed since) is
 * left out with an error in the log.
 */
import type { Directory } from '../admission/directory.js';
import type { Logger } from '../observe/logger.js';
import type { SyncedKind } from './change-feed.js';
import { SERVICES } from './collections.js';
import { aliasesOf, storedServiceEntry, type StoredServiceDoc } from './services.js';

/** The services kind of the change feed: each stored service document applied to the Directory. */
export function serviceKind(sync: ServiceSync): SyncedKind<StoredServiceDoc> {
  return { spec: SERVICES, apply: (doc) => sync.apply(doc) };
}

export class ServiceSync {
  readonly #directory: Directory;
  readonly #log: Logger;
  /** The seq applied for each stored service in the Directory. */
  readonly #applied = new Map<number, number>();
  /** Services whose account this gateway does not know yet (its own change may come later). */
  readonly #waiting = new Map<number, StoredServiceDoc>();
  /** The seq of each service left out for a clash (logged once per version). */
  readonly #refused = new Map<number, number>();

  constructor(directory: Directory, log: Logger) {
    this.#directory = directory;
    this.#log = log.child({ component: 'service-sync' });
  }

  /** Whether the service with this ID is a stored one this gateway serves. */
  isStored(id: number): boolean {
    return this.#applied.has(id);
  }

  /**
   * Applies a document read from the change feed (in any order: the higher seq of a service wins),
   * then those still waiting for their account.
   */
  apply(doc: StoredServiceDoc): void {
    this.#applyOne(doc);
    for (const waiting of [...this.#waiting.values()]) this.#applyOne(waiting);
  }

  #applyOne(doc: StoredServiceDoc): void {
    const id = doc._id;
    const applied = this.#applied.get(id);
    if ((applied ?? this.#refused.get(id) ?? -1) >= doc.seq) return;
    const waiting = this.#waiting.get(id);
    if (waiting && waiting.seq > doc.seq) return;
    this.#waiting.delete(id);
    if (doc.deleted) {
      if (applied !== undefined) this.#directory.removeService(id);
      this.#applied.delete(id);
      return;
    }
    const account = this.#directory.findAccount(doc.accountId);
    if (!account) {
      this.#waiting.set(id, doc);
      return;
    }
    const clash = this.#clash(doc, account.id);
    if (clash) {
      this.#refused.set(id, doc.seq);
      this.#log.error({ serviceId: id, name: doc.definition.name }, `stored service not served: ${clash}`);
      return;
    }
    this.#directory.addService(storedServiceEntry(doc, account));
    this.#applied.set(id, doc.seq);
  }

  /** Why the stored service cannot be served beside the config's and derived services, if it cannot. */
  #clash(doc: StoredServiceDoc, accountId: number): string | undefined {
    const directory = this.#directory;
    const other = (id: number | undefined) => id !== undefined && id !== doc._id && !this.#applied.has(id);
    const sameId = directory.serviceById(doc._id);
    if (sameId && !this.#applied.has(doc._id)) return `a configured or derived service has its ID ${doc._id}`;
    const account = directory.findAccount(accountId)!;
    if (other(directory.findService(account, doc.definition.name)?.id))
      return `a configured or derived service is named '${doc.definition.name}'`;
    const alias = aliasesOf(doc.definition).find((a) => other(directory.serviceByAlias(a)?.id));
    return alias ? `a configured service has the alias '${alias}'` : undefined;
  }
}
