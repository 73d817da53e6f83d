/**
 * The behaviour every FittingStore must have, run against the memory and the MongoDB implementation
 * (test/plugins/fitting-store.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import type { FittingStore, NewJob } from '../../plugins/fitting/store/fitting-store.js';

export interface StoreHarness {
  store: FittingStore;
  close(): Promise<void>;
}

export type MakeStore = (options: { now: () => number }) => Promise<StoreHarness>;

export const newJob = (overrides: Partial<NewJob> = {}): NewJob => ({
  jobId: 1 + Math.floor(Math.random() * 1e9),
  accountId: 1,
  serviceId: 100,
  baseServiceId: 20,
  datasetId: 1,
  configId: null,
  config: '{"alpha":1}',
  modelDir: '/data/fitted/100/a',
  previousModelDir: null,
  runnerId: 'runner-a',
  leaseMs: 1000,
  ...overrides,
});

export function fittingStoreConformance(kind: string, make: MakeStore): void {
  describe(`FittingStore conformance (${kind})`, () => {
    let harness: StoreHarness;
    let store: FittingStore;
    let clock = 1_000_000;
    beforeEach(async () => {
      clock = 1_000_000;
      harness = await make({ now: () => clock });
      store = harness.store;
    });
    afterEach(async () => {
      await harness.close();
    });

    const derived = (id = 100, name = 'mine', accountId = 1) =>
      store.createDerived({ id, accountId, name, description: '', baseServiceId: 20 });
    const conflict = (err: unknown) => isGatewayError(err) && err.status === 409;

    it("hands out increasing IDs per sequence (jobs are numbered too, as the platform's API types them)", async () => {
      expect([await store.nextId('dataset'), await store.nextId('dataset'), await store.nextId('derived')]).toEqual([1, 2, 1]);
      expect([await store.nextId('job'), await store.nextId('job'), await store.nextId('dataset')]).toEqual([1, 2, 3]);
    });

    it('keeps datasets with their content and targets, per account', async () => {
      const content = Buffer.from('["a","b"]');
      const big = Buffer.alloc(3 * 1024 * 1024, 7); // beyond the MongoDB store's inline size
      const one = await store.createDataset({
        id: 1,
        accountId: 1,
        name: 'small',
        description: 'd',
        dataType: 'application/json',
        encoding: 'text',
        content,
        targets: Buffer.from('["x","y"]'),
      });
      await store.createDataset({
        id: 2,
        accountId: 1,
        name: 'big',
        description: '',
        dataType: 'application/octet-stream',
        encoding: 'binary',
        content: big,
        targets: null,
      });
      await store.createDataset({
        id: 3,
        accountId: 2,
        name: 'theirs',
        description: '',
        dataType: 'text/plain',
        encoding: 'text',
        content,
        targets: null,
      });
      expect(one).toMatchObject({
        id: 1,
        accountId: 1,
        name: 'small',
        size: content.length,
        targetsSize: 9,
        createdAt: clock,
        encoding: 'text',
      });
      expect((await store.listDatasets(1)).map((d) => d.name)).toEqual(['small', 'big']);
      expect(await store.getDataset(3)).toMatchObject({ accountId: 2, targetsSize: null });
      const read = await store.readDataset(1);
      expect(read?.content.toString()).toBe('["a","b"]');
      expect(read?.targets?.toString()).toBe('["x","y"]');
      expect((await store.readDataset(2))?.content.equals(big)).toBe(true);
      expect(await store.deleteDataset(2)).toBe(true);
      expect(await store.deleteDataset(2)).toBe(false);
      expect(await store.getDataset(2)).toBeNull();
      expect(await store.readDataset(2)).toBeNull();
    });

    it('refuses a second derived service of the same name in one account', async () => {
      await derived(100, 'mine', 1);
      await derived(101, 'mine', 2);
      const err = await derived(102, 'mine', 1).catch((e: unknown) => e);
      expect(conflict(err)).toBe(true);
      expect((await store.listDerived()).map((d) => d.id)).toEqual([100, 101]);
      expect((await store.listDerived(2)).map((d) => d.id)).toEqual([101]);
      expect(await store.getDerived(100)).toMatchObject({ modelDir: null, fittedAt: null, createdAt: clock });
    });

    it('runs a job PENDING → RUNNING → SUCCESS and switches its service to the model', async () => {
      await derived();
      const job = await store.createJob(newJob({ jobId: 1 }));
      expect(job).toMatchObject({ status: 'PENDING', percentage: 0, leaseUntil: clock + 1000, startedAt: null, completedAt: null });
      clock += 10;
      expect(await store.startJob(1, 'runner-b', 1000)).toBeNull();
      expect(await store.startJob(1, 'runner-a', 1000)).toMatchObject({ status: 'RUNNING', startedAt: clock });
      expect(await store.reportProgress(1, 'runner-a', 40, 1000)).toBe(true);
      expect(await store.reportProgress(1, 'runner-b', 50, 1000)).toBe(false);
      expect(await store.getJob(1)).toMatchObject({ percentage: 40 });
      clock += 10;
      const done = await store.completeJob(1, 'runner-a');
      expect(done).toMatchObject({ status: 'SUCCESS', percentage: 100, completedAt: clock, applied: true, leaseUntil: null });
      expect(await store.getDerived(100)).toMatchObject({ modelDir: '/data/fitted/100/a', fittedAt: clock, fittedByJobId: 1 });
      expect(await store.completeJob(1, 'runner-a')).toBeNull();
    });

    it('allows one active job per derived service', async () => {
      await derived();
      await store.createJob(newJob({ jobId: 1 }));
      const err = await store.createJob(newJob({ jobId: 2 })).catch((e: unknown) => e);
      expect(conflict(err)).toBe(true);
      expect((err as Error).message).toContain(1);
      expect(await store.deleteDerived(100)).toBe('busy');
      await store.failJob(1, 'runner-a', { status: 502, code: 'X', message: 'boom' });
      expect(await store.getJob(1)).toMatchObject({ status: 'FAILED', error: { status: 502, code: 'X', message: 'boom' } });
      await store.createJob(newJob({ jobId: 2, serviceId: 100 }));
      await store.cancelJob(2);
      expect(await store.deleteDerived(100)).toBe('deleted');
      expect(await store.deleteDerived(100)).toBe('missing');
    });

    it('cancels an active job; the runner then writes nothing', async () => {
      await derived();
      await store.createJob(newJob({ jobId: 1 }));
      await store.startJob(1, 'runner-a', 1000);
      expect(await store.cancelJob(1)).toMatchObject({ status: 'CANCELED', error: null });
      expect(await store.reportProgress(1, 'runner-a', 90, 1000)).toBe(false);
      expect(await store.renewLeases([1], 'runner-a', 1000)).toEqual(new Set());
      expect(await store.completeJob(1, 'runner-a')).toBeNull();
      expect(await store.failJob(1, 'runner-a', { status: 500, code: 'X', message: 'late' })).toBeNull();
      expect(await store.cancelJob(1)).toMatchObject({ status: 'CANCELED' });
      expect(await store.cancelJob(999)).toBeNull();
      expect(await store.getDerived(100)).toMatchObject({ modelDir: null });
    });

    it('fails jobs whose lease ran out, and only those', async () => {
      await derived(100);
      await derived(101, 'second');
      await store.createJob(newJob({ jobId: 11 }));
      await store.createJob(newJob({ jobId: 12, serviceId: 101 }));
      clock += 900;
      // Only the runner's own jobs are renewed.
      expect(await store.renewLeases([12, 999], 'runner-a', 1000)).toEqual(new Set([12]));
      expect(await store.renewLeases([12], 'runner-b', 1000)).toEqual(new Set());
      expect(await store.getJob(12)).toMatchObject({ leaseUntil: clock + 1000 });
      clock += 200;
      const error = { status: 503, code: 'FITTING_INTERRUPTED', message: 'stopped' };
      const expired = await store.expireJobs(clock, error);
      expect(expired.map((j) => j.jobId)).toEqual([11]);
      expect(await store.getJob(11)).toMatchObject({ status: 'FAILED', error });
      expect(await store.getJob(12)).toMatchObject({ status: 'PENDING' });
      // The slot is free again.
      await store.createJob(newJob({ jobId: 13 }));
      // One batch renews every active job of the runner, and not the failed one.
      expect(await store.renewLeases([12, 13, 11], 'runner-a', 1000)).toEqual(new Set([12, 13]));
    });

    it("lists an account's jobs newest first", async () => {
      await derived(100);
      await derived(101, 'b');
      await store.createJob(newJob({ jobId: 21 }));
      clock += 1;
      await store.createJob(newJob({ jobId: 22, serviceId: 101 }));
      await store.createJob(newJob({ jobId: 23, serviceId: 102, accountId: 2 }));
      expect((await store.listJobs(1, 10)).map((j) => j.jobId)).toEqual([22, 21]);
      expect((await store.listJobs(1, 1)).map((j) => j.jobId)).toEqual([22]);
    });

    it("a later fit's model is not replaced by an earlier one applied late", async () => {
      await derived();
      await store.createJob(newJob({ jobId: 31, modelDir: '/m/old' }));
      await store.startJob(31, 'runner-a', 1000);
      await store.completeJob(31, 'runner-a');
      clock += 100;
      await store.createJob(newJob({ jobId: 32, modelDir: '/m/new', previousModelDir: '/m/old' }));
      await store.startJob(32, 'runner-a', 1000);
      await store.completeJob(32, 'runner-a');
      expect(await store.applyPendingResults()).toEqual([]);
      expect(await store.getDerived(100)).toMatchObject({ modelDir: '/m/new', fittedByJobId: 32 });
      expect(await store.getJob(32)).toMatchObject({ previousModelDir: '/m/old' });
    });
  });
}
