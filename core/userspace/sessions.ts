/**
 * Console sessions. The cookie carries a random ID; the store keeps only its sha256, with the CSRF token
 * a change made with the session must echo. Sessions expire `sessionTtlHours` after sign-in and can be
 * listed and ended by their user.
 */
import { randomBytes } from 'node:crypto';
import { hashSecret } from '../admission/secret-hashes.js';
import type { Collection } from '../storage/port.js';
import type { SessionDoc } from './collections.js';

/** How often a session's `lastSeenAt` is written at most (not on every call). */
const SEEN_RESOLUTION_MS = 60_000;
const USER_AGENT_MAX = 256;

export interface SessionView {
  id: string;
  createdAt: string;
  expiresAt: string;
  lastSeenAt: string;
  userAgent: string;
  current: boolean;
  /** The current account's ID; null when the session acts for none. */
  account: number | null;
}

/** The stored ID of a session: its public handle in the API too (it cannot be turned back into the cookie). */
export const sessionHandle = (cookie: string): string => hashSecret(cookie).slice('sha256:'.length);

export class Sessions {
  readonly collection: Collection<SessionDoc>;
  readonly #ttlMs: number;

  constructor(collection: Collection<SessionDoc>, ttlHours: number) {
    this.collection = collection;
    this.#ttlMs = ttlHours * 3_600_000;
  }

  /** A new session acting for `account` (none: undefined): the cookie value (shown only to the browser) and its record. */
  async open(userId: string, userAgent: string, account?: number): Promise<{ cookie: string; session: SessionDoc }> {
    const cookie = randomBytes(32).toString('base64url');
    const now = Date.now();
    const session: SessionDoc = {
      _id: sessionHandle(cookie),
      userId,
      csrf: randomBytes(24).toString('base64url'),
      createdAt: now,
      expiresAt: now + this.#ttlMs,
      lastSeenAt: now,
      userAgent: userAgent.slice(0, USER_AGENT_MAX),
      ...(account !== undefined ? { account } : {}),
    };
    await this.collection.insert(session);
    return { cookie, session };
  }

  /** The live session a cookie names; undefined when unknown or expired. */
  async find(cookie: string): Promise<SessionDoc | undefined> {
    const session = await this.collection.get(sessionHandle(cookie));
    const now = Date.now();
    if (!session || session.expiresAt <= now) return undefined;
    if (now - session.lastSeenAt > SEEN_RESOLUTION_MS) {
      await this.collection.updateMany({ _id: session._id }, { $set: { lastSeenAt: now } });
      session.lastSeenAt = now;
    }
    return session;
  }

  /** Makes `account` the session's current account: the session as changed; null when it is gone. */
  setAccount(id: string, account: number): Promise<SessionDoc | null> {
    return this.collection.findOneAndUpdate(
      { _id: id, expiresAt: { $gt: Date.now() } },
      { $set: { account } },
      { returnDocument: 'after' },
    );
  }

  async ofUser(userId: string): Promise<SessionDoc[]> {
    return this.collection.find({ userId, expiresAt: { $gt: Date.now() } }, { sort: { createdAt: -1 } });
  }

  /** Ends one session of `userId`; false when it has no such session. */
  async end(userId: string, id: string): Promise<boolean> {
    return (await this.collection.deleteMany({ _id: id, userId })) > 0;
  }

  /** Removes expired sessions (the sweep). */
  purge(): Promise<number> {
    return this.collection.deleteMany({ expiresAt: { $lte: Date.now() } });
  }
}

export function sessionView(session: SessionDoc, currentId?: string): SessionView {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: session._id,
    createdAt: iso(session.createdAt),
    expiresAt: iso(session.expiresAt),
    lastSeenAt: iso(session.lastSeenAt),
    userAgent: session.userAgent,
    current: session._id === currentId,
    account: session.account ?? null,
  };
}
