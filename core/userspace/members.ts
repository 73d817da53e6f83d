/** Who may do what in which account: one membership (`<accountId>:<userId>`) per person and account. */
import type { Collection } from '../storage/port.js';
import type { MemberDoc, MemberRole } from './collections.js';

export class Members {
  readonly collection: Collection<MemberDoc>;

  constructor(collection: Collection<MemberDoc>) {
    this.collection = collection;
  }

  async role(accountId: number, userId: string): Promise<MemberRole | undefined> {
    return (await this.collection.get(`${accountId}:${userId}`))?.role;
  }

  ofAccount(accountId: number): Promise<MemberDoc[]> {
    return this.collection.find({ accountId });
  }

  ofUser(userId: string): Promise<MemberDoc[]> {
    return this.collection.find({ userId });
  }

  /** Adds the membership or changes its role. */
  async set(accountId: number, userId: string, role: MemberRole): Promise<MemberDoc> {
    const doc = await this.collection.findOneAndUpdate(
      { _id: `${accountId}:${userId}` },
      { $set: { accountId, userId, role } },
      { upsert: true, returnDocument: 'after' },
    );
    return doc!;
  }

  /** Changes the role of an existing membership; null when there is none. */
  update(accountId: number, userId: string, role: MemberRole): Promise<MemberDoc | null> {
    return this.collection.findOneAndUpdate({ _id: `${accountId}:${userId}` }, { $set: { role } }, { returnDocument: 'after' });
  }

  async remove(accountId: number, userId: string): Promise<boolean> {
    return (await this.collection.deleteMany({ _id: `${accountId}:${userId}` })) > 0;
  }
}
