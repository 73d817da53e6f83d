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
  jobId: `job-${Math.random().toString(36).slice(2)}`,
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

    const derived = (id = 100, name = 'mine', accountId = 1) => store.createDerived({ id, accountId, name, description: '', baseServiceId: 20 });
    const conflict = (err: unknown) => isGatewayError(err) && err.status === 409;

    it('hands out increasing IDs per sequence', async () => {
      expect([await store.nextId('dataset'), await store.nextId('dataset'), await store.nextId('derived')]).toEqual([1, 2, 1]);
    });

    it('keeps datasets with their content and targets, per account', async () => {
      const content = Buffer.from('["a","b"]');
      const big = Buffer.alloc(3 * 1024 * 1024, 7); // beyond the MongoDB store's inline size
      const one = await store.createDataset({ id: 1, accountId: 1, name: 'small', description: 'd', dataType: 'application/json', encoding: 'text', content, targets: Buffer.from('["x","y"]') });
      await store.createDataset({ id: 2, accountId: 1, name: 'big', description: '', dataType: 'application/octet-stream', encoding: 'binary', content: big, targets: null });
      await store.createDataset({ id: 3, accountId: 2, name: 'theirs', description: '', dataType: 'text/plain', encoding: 'text', content, targets: null });
      expect(one).toMatchObject({ id: 1, accountId: 1, name: 'small', size: content.length, targetsSize: 9, createdAt: clock, encoding: 'text' });
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
      const job = await store.createJob(newJob({ jobId: 'j1' }));
      expect(job).toMatchObject({ status: 'PENDING', percentage: 0, leaseUntil: clock + 1000, startedAt: null, completedAt: null });
      clock += 10;
      expect(await store.startJob('j1', 'runner-b', 1000)).toBeNull();
      expect(await store.startJob('j1', 'runner-a', 1000)).toMatchObject({ status: 'RUNNING', startedAt: clock });
      expect(await store.reportProgress('j1', 'runner-a', 40, 1000)).toBe(true);
      expect(await store.reportProgress('j1', 'runner-b', 50, 1000)).toBe(false);
      expect(await store.getJob('j1')).toMatchObject({ percentage: 40 });
      clock += 10;
      const done = await store.completeJob('j1', 'runner-a');
      expect(done).toMatchObject({ status: 'SUCCESS', percentage: 100, completedAt: clock, applied: true, leaseUntil: null });
      expect(await store.getDerived(100)).toMatchObject({ modelDir: '/data/fitted/100/a', fittedAt: clock, fittedByJobId: 'j1' });
      expect(await store.completeJob('j1', 'runner-a')).toBeNull();
    });

    it('allows one active job per derived service', async () => {
      await derived();
      await store.createJob(newJob({ jobId: 'j1' }));
      const err = await store.createJob(newJob({ jobId: 'j2' })).catch((e: unknown) => e);
      expect(conflict(err)).toBe(true);
      expect((err as Error).message).toContain('j1');
      expect(await store.deleteDerived(100)).toBe('busy');
      await store.failJob('j1', 'runner-a', { status: 502, code: 'X', message: 'boom' });
      expect(await store.getJob('j1')).toMatchObject({ status: 'FAILED', error: { status: 502, code: 'X', message: 'boom' } });
      await store.createJob(newJob({ jobId: 'j2', serviceId: 100 }));
      await store.cancelJob('j2');
      expect(await store.deleteDerived(100)).toBe('deleted');
      expect(await store.deleteDerived(100)).toBe('missing');
    });

    it('cancels an active job; the runner then writes nothing', async () => {
      await derived();
      await store.createJob(newJob({ jobId: 'j1' }));
      await store.startJob('j1', 'runner-a', 1000);
      expect(await store.cancelJob('j1')).toMatchObject({ status: 'CANCELED', error: null });
      expect(await store.reportProgress('j1', 'runner-a', 90, 1000)).toBe(false);
      expect(await store.renewLease('j1', 'runner-a', 1000)).toBe(false);
      expect(await store.completeJob('j1', 'runner-a')).toBeNull();
      expect(await store.failJob('j1', 'runner-a', { status: 500, code: 'X', message: 'late' })).toBeNull();
      expect(await store.cancelJob('j1')).toMatchObject({ status: 'CANCELED' });
      expect(await store.cancelJob('nope')).toBeNull();
      expect(await store.getDerived(100)).toMatchObject({ modelDir: null });
    });

    it('fails jobs whose lease ran out, and only those', async () => {
      await derived(100);
      await derived(101, 'second');
      await store.createJob(newJob({ jobId: 'stale' }));
      await store.createJob(newJob({ jobId: 'fresh', serviceId: 101 }));
      clock += 900;
      expect(await store.renewLease('fresh', 'runner-a', 1000)).toBe(true);
      clock += 200;
      const error = { status: 503, code: 'FITTING_INTERRUPTED', message: 'stopped' };
      const expired = await store.expireJobs(clock, error);
      expect(expired.map((j) => j.jobId)).toEqual(['stale']);
      expect(await store.getJob('stale')).toMatchObject({ status: 'FAILED', error });
      expect(await store.getJob('fresh')).toMatchObject({ status: 'PENDING' });
      // The slot is free again.
      await store.createJob(newJob({ jobId: 'again' }));
    });

    it('lists an account\'s jobs newest first', async () => {
      await derived(100);
      await derived(101, 'b');
      await store.createJob(newJob({ jobId: 'first' }));
      clock += 1;
      await store.createJob(newJob({ jobId: 'second', serviceId: 101 }));
      await store.createJob(newJob({ jobId: 'theirs', serviceId: 102, accountId: 2 }));
      expect((await store.listJobs(1, 10)).map((j) => j.jobId)).toEqual(['second', 'first']);
      expect((await store.listJobs(1, 1)).map((j) => j.jobId)).toEqual(['second']);
    });

    it('a later fit\'s model is not replaced by an earlier one applied late', async () => {
      await derived();
      await store.createJob(newJob({ jobId: 'old', modelDir: '/m/old' }));
      await store.startJob('old', 'runner-a', 1000);
      await store.completeJob('old', 'runner-a');
      clock += 100;
      await store.createJob(newJob({ jobId: 'new', modelDir: '/m/new', previousModelDir: '/m/old' }));
      await store.startJob('new', 'runner-a', 1000);
      await store.completeJob('new', 'runner-a');
      expect(await store.applyPendingResults()).toEqual([]);
      expect(await store.getDerived(100)).toMatchObject({ modelDir: '/m/new', fittedByJobId: 'new' });
      expect(await store.getJob('new')).toMatchObject({ previousModelDir: '/m/old' });
    });
  });
}
