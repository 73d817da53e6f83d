/** What the user-space plugin (and others built on it) may use of the stored model. */
export { UserSpace } from './user-space.js';
export type { AccountChanges, AccountView, Source } from './accounts.js';
export type { ChangeFeed, SyncedCollection, SyncedKind } from './change-feed.js';
export type { AccountDoc, Budget, MemberDoc, MemberRole, SessionDoc, SyncedDoc, UserDoc } from './collections.js';
export { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js';
export { sessionView, type SessionView } from './sessions.js';
export { normaliseEmail, userView, type UserView } from './users.js';
export { BUDGETS_SCHEMA } from './budgets.js';
export { MAX_KEYS_PER_ACCOUNT, type KeyDoc, type KeySettings } from './keys.js';
