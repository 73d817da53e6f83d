/**
 * The user space of one gateway: its collections on the gateway's store, the change feed that keeps the
 * Directory in step with the stored accounts (and keys and services), the seeding of `userSpace.users`
 * and the first operator. Nothing is opened until `start()` (the user-space plugin starts it): a gateway
 * without the plugin reads no user-space collection.
 */
import { randomBytes } from 'node:crypto';
import type { GatewayConfig } from '../config/types.js';
import type { Directory } from '../admission/directory.js';
import { hashesEqual, hashSecret } from '../admission/secret-hashes.js';
import { gatewayError } from '../errors.js';
import type { Logger } from '../observe/logger.js';
import { isDuplicateKey, type Collection, type DocStore } from '../storage/port.js';
import type { Storage } from '../storage/storage.js';
import { Accounts, accountKind } from './accounts.js';
import { ChangeFeed, type SyncedCollection, type SyncedKind } from './change-feed.js';
import { MEMBERS, META, SERVICE_ALIASES, SESSIONS, USERS, type MetaDoc, type SyncedDoc, type UserDoc } from './collections.js';
import { KeyStore, keyKind } from './keys.js';
import { Members } from './members.js';
import { ServiceSync, serviceKind } from './service-sync.js';
import { StoredServices } from './services.js';
import { Sessions } from './sessions.js';
import { Users } from './users.js';

/** Soft-deleted synced documents are removed this long after their delete (every gateway applied it long before). */
const DELETED_KEPT_MS = 7 * 86_400_000;

export interface UserSpaceOptions {
  /** Where GATEWAY_ADMIN_EMAIL and GATEWAY_ADMIN_PASSWORD are read (default process.env). */
  env?: NodeJS.ProcessEnv;
}

interface Opened {
  feed: ChangeFeed;
  meta: Collection<MetaDoc>;
  accounts: Accounts;
  keys: KeyStore;
  users: Users;
  members: Members;
  sessions: Sessions;
  services: StoredServices;
  stopSweeps: (() => void)[];
}

export class UserSpace {
  readonly config: GatewayConfig;
  readonly #storage: Storage;
  readonly #directory: Directory;
  readonly #logger: Logger;
  readonly #env: NodeJS.ProcessEnv;
  #opened: Opened | undefined;
  #starting: Promise<void> | undefined;
  /** sha256 of the one-time setup token printed while no operator exists; undefined once used or when not needed. */
  #setupTokenHash: string | undefined;
  readonly #serviceSync: ServiceSync;

  constructor(config: GatewayConfig, storage: Storage, directory: Directory, logger: Logger, options: UserSpaceOptions = {}) {
    this.config = config;
    this.#storage = storage;
    this.#directory = directory;
    this.#logger = logger;
    this.#env = options.env ?? process.env;
    this.#serviceSync = new ServiceSync(directory, logger);
  }

  get started(): boolean {
    return this.#opened !== undefined;
  }

  get #parts(): Opened {
    if (!this.#opened) throw gatewayError('GATE_IS_SHUT_DOWN');
    return this.#opened;
  }

  get feed(): ChangeFeed {
    return this.#parts.feed;
  }
  get meta(): Collection<MetaDoc> {
    return this.#parts.meta;
  }
  get accounts(): Accounts {
    return this.#parts.accounts;
  }
  get keys(): KeyStore {
    return this.#parts.keys;
  }
  get users(): Users {
    return this.#parts.users;
  }
  get members(): Members {
    return this.#parts.members;
  }
  get sessions(): Sessions {
    return this.#parts.sessions;
  }
  get services(): StoredServices {
    return this.#parts.services;
  }
  /** Which services in the Directory are stored ones (the others come from the config file or fitting). */
  get serviceSync(): ServiceSync {
    return this.#serviceSync;
  }

  /** Opens the collections, applies every stored synced document, seeds users; idempotent. */
  start(): Promise<void> {
    return (this.#starting ??= this.#start());
  }

  async #start(): Promise<void> {
    const docs = this.#storage.docs;
    const settings = this.config.userSpace;
    const meta = await docs.collection<MetaDoc>(META);
    const feed = new ChangeFeed(meta, { intervalMs: settings.syncIntervalMs, graceMs: settings.slowWriteGraceMs, logger: this.#logger });
    const configAccountIds = new Set(this.config.accounts.map((a) => a.id));
    const storedAccounts = await this.#follow(docs, feed, accountKind(this.#directory, configAccountIds));
    // The keys and services kinds register here too (their `SyncedKind`s apply them to the Directory).
    const storedServices = await this.#follow(docs, feed, serviceKind(this.#serviceSync));
    const opened: Opened = {
      feed,
      meta,
      accounts: new Accounts(storedAccounts, meta, this.config, this.#directory),
      keys: new KeyStore(await this.#follow(docs, feed, keyKind(this.#directory))),
      users: new Users(await docs.collection<UserDoc>(USERS)),
      members: new Members(await docs.collection(MEMBERS)),
      sessions: new Sessions(await docs.collection(SESSIONS), settings.sessionTtlHours),
      services: new StoredServices(
        storedServices,
        await docs.collection(SERVICE_ALIASES),
        meta,
        Math.max(0, ...this.config.services.map((s) => s.id)),
      ),
      stopSweeps: [],
    };
    await feed.start();
    this.#opened = opened;
    opened.stopSweeps.push(
      this.#storage.sweep('user-space sessions', 3_600_000, () => opened.sessions.purge()),
      this.#storage.sweep('user-space deleted entries', 3_600_000, () => this.#sweepDeleted()),
    );
    await this.#seedUsers();
    await this.#bootstrapOperator();
  }

  readonly #synced: SyncedCollection<any>[] = [];

  /** Registers a synced kind on the feed (before `feed.start()`). */
  async #follow<T extends SyncedDoc>(docs: DocStore, feed: ChangeFeed, kind: SyncedKind<T>): Promise<SyncedCollection<T>> {
    const synced = await feed.register(docs, kind);
    this.#synced.push(synced);
    return synced;
  }

  async stop(): Promise<void> {
    const opened = this.#opened;
    if (!opened) return;
    this.#opened = undefined;
    this.#starting = undefined;
    opened.feed.stop();
    for (const stop of opened.stopSweeps) stop();
  }

  async #sweepDeleted(): Promise<number> {
    let removed = 0;
    for (const synced of this.#synced)
      removed += await synced.collection.deleteMany({ deleted: true, deletedAt: { $lt: Date.now() - DELETED_KEPT_MS } });
    return removed;
  }

  /** `userSpace.users`: each created when its email is not stored yet, with its memberships; an existing one is left alone. */
  async #seedUsers(): Promise<void> {
    const { users, members } = this.#parts;
    for (const seed of this.config.userSpace.users) {
      if (await users.byEmail(seed.email)) continue;
      let user: UserDoc;
      try {
        user = await users.create({ email: seed.email, password: seed.password, operator: seed.operator });
      } catch (err) {
        // Another gateway seeding the same file at the same moment.
        if ((err as { code?: string }).code === 'CONFLICT') continue;
        throw err;
      }
      for (const [ref, role] of Object.entries(seed.accounts)) {
        const account = this.#directory.findAccount(ref);
        if (account) await members.set(account.id, user._id, role);
      }
      this.#logger.info({ email: user.email, operator: user.operator }, 'user space: seeded a user from userSpace.users');
    }
  }

  /**
   * The first operator: from GATEWAY_ADMIN_EMAIL and GATEWAY_ADMIN_PASSWORD when set, else a one-time
   * setup token printed in the log, good on this gateway until an operator exists.
   */
  async #bootstrapOperator(): Promise<void> {
    const { users } = this.#parts;
    if (await users.anyOperator()) return;
    const email = this.#env.GATEWAY_ADMIN_EMAIL;
    const password = this.#env.GATEWAY_ADMIN_PASSWORD;
    if (email && password) {
      const existing = await users.byEmail(email);
      if (existing) await users.collection.updateMany({ _id: existing._id }, { $set: { operator: true } });
      else await users.create({ email, password, operator: true });
      this.#logger.info({ email: email.toLowerCase() }, 'user space: operator created from GATEWAY_ADMIN_EMAIL');
      return;
    }
    const token = randomBytes(24).toString('base64url');
    this.#setupTokenHash = hashSecret(token);
    this.#logger.warn(
      { setupToken: token },
      `user space: no operator yet. Create one with POST /api/platformcore/auth/setup {"token":"${token}","email":...,"password":...} (one time), or start with GATEWAY_ADMIN_EMAIL and GATEWAY_ADMIN_PASSWORD`,
    );
  }

  /** The setup token printed at start, while it is still good (tests and the banner). */
  get setupPending(): boolean {
    return this.#setupTokenHash !== undefined;
  }

  /** Uses the one-time setup token: creates the first operator (401 SETUP_TOKEN_INVALID otherwise). */
  async setup(token: string, email: string, password: string): Promise<UserDoc> {
    const expected = this.#setupTokenHash;
    if (!expected || !hashesEqual(hashSecret(token), expected)) throw gatewayError('SETUP_TOKEN_INVALID');
    const { users, meta } = this.#parts;
    if (await users.anyOperator()) {
      this.#setupTokenHash = undefined;
      throw gatewayError('SETUP_TOKEN_INVALID');
    }
    // An existing person becomes the operator only with their own password.
    const existing = await users.byEmail(email);
    if (existing && !(await users.verify(email, password))) throw gatewayError('SIGN_IN_FAILED');
    // One setup across every gateway on the store, even when two tokens are used at once.
    try {
      await meta.insert({ _id: 'operatorSetup', n: Date.now() });
    } catch (err) {
      if (isDuplicateKey(err)) throw gatewayError('SETUP_TOKEN_INVALID');
      throw err;
    }
    this.#setupTokenHash = undefined;
    if (existing) {
      await users.collection.updateMany({ _id: existing._id }, { $set: { operator: true } });
      return { ...existing, operator: true };
    }
    return users.create({ email, password, operator: true });
  }
}
