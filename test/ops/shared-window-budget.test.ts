/**
 * SharedWindowBudget on the MongoDB-wire server and on the embedded store (one database file opened
 * twice), two budgets (two gateways or workers) on one collection with a shared clock: what they admit
 * together per window, and the return of an idle gateway's share.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { SharedWindowBudget, limitWindows, type WindowDoc } from '../../core/admission/shared-window-budget.js';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';

const settle = () => new Promise((r) => setTimeout(r, 30));

/** `count` budgets (gateways) on one collection (default two). */
type Pair = (name: string, clock: { now: number }, count?: number) => Promise<SharedWindowBudget[]>;

describe('shared window budget on the embedded store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-budget-'));
  const homes: SqliteDocStore[] = [];
  afterAll(async () => {
    for (const h of homes) await h.close();
    rmSync(dir, { recursive: true, force: true });
  });
  budgetSuite(async (name, clock, count = 2) => {
    const budgets: SharedWindowBudget[] = [];
    for (let i = 0; i < count; i++) {
      const home = new SqliteDocStore(dir);
      homes.push(home);
      const collection = await home.collection<WindowDoc>(limitWindows(name));
      budgets.push(new SharedWindowBudget({ collection, windowMs: 60_000, now: () => clock.now }));
    }
    return budgets;
  });
});

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

  budgetSuite(async (name, clock, count = 2) => {
    const collection = await new MongoDocStore(connection).collection<WindowDoc>(limitWindows(name));
    return Array.from({ length: count }, () => new SharedWindowBudget({ collection, windowMs: 60_000, now: () => clock.now }));
  });
});

function budgetSuite(pair: Pair): void {
  it('admits the limit per window across gateways, no more, and starts afresh in the next window', async () => {
    const clock = { now: 600_000 };
    const budgets = await pair('budget_a', clock);
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

  it('three gateways in rushes admit the limit together and no more', async () => {
    const clock = { now: 1_800_000 };
    const budgets = await pair('budget_rush', clock, 3);
    let admitted = 0;
    // Each round every gateway gets a rush while its lease is under way, then the leases land.
    for (let round = 0; round < 12; round++) {
      for (let i = 0; i < 30; i++) if (budgets[(i + round) % 3]!.tryTake('acct', 40)) admitted++;
      await settle();
    }
    expect(admitted).toBe(40);
    for (const b of budgets) b.close();
  });

  it('gives back what an idle gateway holds, for the others to use', async () => {
    const clock = { now: 1_200_000 };
    const [a, b] = await pair('budget_b', clock);
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
}
