/** People: email (unique, lower-cased) and a scrypt password hash; `operator` stands above accounts. */
import { randomBytes } from 'node:crypto';
import { gatewayError } from '../errors.js';
import { isDuplicateKey, type Collection } from '../storage/port.js';
import type { UserDoc } from './collections.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';

export interface UserView {
  id: string;
  email: string;
  operator: boolean;
  createdAt: string;
}

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

export class Users {
  readonly collection: Collection<UserDoc>;

  constructor(collection: Collection<UserDoc>) {
    this.collection = collection;
  }

  get(id: string): Promise<UserDoc | null> {
    return this.collection.get(id);
  }

  byEmail(email: string): Promise<UserDoc | null> {
    return this.collection.findOne({ email: normaliseEmail(email) });
  }

  /** Creates a person (409 CONFLICT when the email is taken). */
  async create(input: { email: string; password: string; operator?: boolean }): Promise<UserDoc> {
    const doc: UserDoc = {
      _id: `usr_${randomBytes(12).toString('base64url')}`,
      email: normaliseEmail(input.email),
      passwordHash: await hashPassword(input.password),
      operator: input.operator ?? false,
      createdAt: Date.now(),
    };
    try {
      await this.collection.insert(doc);
    } catch (err) {
      if (isDuplicateKey(err))
        throw gatewayError('CONFLICT', { param: 'email', args: { reason: `A user with email '${doc.email}' already exists` } });
      throw err;
    }
    return doc;
  }

  /** The user whose email and password these are; undefined otherwise (as slow either way). */
  async verify(email: string, password: string): Promise<UserDoc | undefined> {
    const user = await this.byEmail(email);
    const ok = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
    return user && ok ? user : undefined;
  }

  async anyOperator(): Promise<boolean> {
    return (await this.collection.count({ operator: true })) > 0;
  }
}

export function userView(user: UserDoc): UserView {
  return { id: user._id, email: user.email, operator: user.operator, createdAt: new Date(user.createdAt).toISOString() };
}
