/**
 * SharedWindowBudget on the MongoDB-wire server, two budgets (two gateways) on one collection with a
 * shared clock: what they admit together per window, and the return of an idle gateway's share.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { SharedWindowBudget } from '../../core/limits/shared-window-budget.js';
import { connectionDb, openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';

const settle = () => new Promise((r) => setTimeout(r, 30));

describe.skipIf(!requirePrerequisite('shared window budget on MongoDB', mongoPrerequisite()))('shared window budget', () => {
  let server: MongoTestServer;
  let connection: Connection;
  beforeAll(async () => {
    server = await startMongo();
    connection = await openMongoConnection(server.uri);
  });
  afterAll(async () => {
    await connection?.close();
    await server?.stop();
  });

  const pair = (name: string, clock: { now: number }) => {
    const collection = connectionDb(connection).collection(name) as any;
    return [0, 1].map(() => new SharedWindowBudget({ collection, windowMs: 60_000, now: () => clock.now }));
  };

  it('admits the limit per window across gateways, no more, and starts afresh in the next window', async () => {
    const clock = { now: 600_000 };
    const budgets = pair('budget_a', clock);
    let admitted = 0;
    for (let i = 0; i < 120; i++) {
      if (budgets[i % 2]!.tryTake('acct', 40)) admitted++;
      await settle();
    }
    expect(admitted).toBe(40);
    clock.now += 60_000;
    // At once, before any lease is back: each spends at most one share (a tenth) ahead of its lease.
    let burst = 0;
    for (let i = 0; i < 20; i++) if (budgets[i % 2]!.tryTake('acct', 40)) burst++;
    expect(burst).toBe(8);
    await settle();
    let rest = 0;
    for (let i = 0; i < 60; i++) {
      if (budgets[i % 2]!.tryTake('acct', 40)) rest++;
      await settle();
    }
    expect(burst + rest).toBe(40);
    for (const b of budgets) b.close();
  });

  it('gives back what an idle gateway holds, for the others to use', async () => {
    const clock = { now: 1_200_000 };
    const [a, b] = pair('budget_b', clock);
    for (let i = 0; i < 3; i++) {
      expect(a!.tryTake('acct', 40)).toBe(true);
      await settle();
    }
    // a leased ahead of its use; idle for longer than the return interval, it gives the rest back.
    clock.now += 1000;
    await new Promise((r) => setTimeout(r, 600));
    let admitted = 0;
    for (let i = 0; i < 60; i++) {
      if (b!.tryTake('acct', 40)) admitted++;
      await settle();
    }
    expect(admitted).toBe(37);
    a!.close();
    b!.close();
  });
});
