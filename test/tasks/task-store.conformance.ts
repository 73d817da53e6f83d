/**
 * The contract every TaskStore meets, run against each implementation with a factory. Time comes from
 * a settable clock, so leases and retention are tested without sleeping.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import {
  DAY_MS,
  REQUEST_INLINE_MAX_BYTES,
  type ClaimedTask,
  type CreateTaskInput,
  type TaskRecord,
  type TaskStore,
} from '../../core/tasks/task-store.js';

export interface ConformanceHarness {
  store: TaskStore;
  /** References of the payload files in file storage (GridFS files / data dir). */
  listFiles(): Promise<string[]>;
  /** Changes the stored bytes of one file (same length, other content). */
  corruptFile(ref: string): Promise<void>;
  close(): Promise<void>;
}

export type HarnessFactory = (options: { now: () => number; retentionMs: number }) => Promise<ConformanceHarness>;

const RETENTION_MS = 7 * DAY_MS;
/** Just above the request-body inline limit, so the body goes to file storage. */
const REQUEST_BODY_OVER_INLINE = REQUEST_INLINE_MAX_BYTES + 1;
const LEASE_MS = 30_000;
const CAPS = { maxQueuedPerAccount: 250 };

export function input(callerId = 1, body: Buffer | string = '{"x":1}', extra: Partial<CreateTaskInput['request']> = {}): CreateTaskInput {
  return {
    callerId,
    serviceId: 10,
    serviceAccountId: 2,
    request: { kind: 'raw', body: Buffer.isBuffer(body) ? body : Buffer.from(body), ...extra },
  };
}

export function taskStoreConformance(name: string, factory: HarnessFactory): void {
  describe(`TaskStore conformance: ${name}`, () => {
    let clock = 0;
    let h: ConformanceHarness;
    let store: TaskStore;
    const claim = (workerId = 'w1', maxRunningPerAccount: number | ((a: number) => number) = 50) =>
      store.claim({ workerId, leaseMs: LEASE_MS, maxRunningPerAccount });
    const claimed = async (workerId = 'w1'): Promise<ClaimedTask & { leaseToken: string }> => {
      const task = await claim(workerId);
      expect(task).not.toBeNull();
      expect(task!.leaseToken).toEqual(expect.any(String));
      return task as ClaimedTask & { leaseToken: string };
    };
    /** One lease renewed alone: whether the store still holds it for this token. */
    const renew = async (taskId: string, leaseToken: string) => (await store.renewLeases([{ taskId, leaseToken }], LEASE_MS)).has(taskId);
    const result = (body: string | Buffer, statusCode = 200) => ({
      statusCode,
      headers: { 'content-type': 'application/json', 'x-model.version': '3' },
      body: Buffer.isBuffer(body) ? body : Buffer.from(body),
    });

    beforeEach(async () => {
      clock = 1_700_000_000_000;
      h = await factory({ now: () => clock, retentionMs: RETENTION_MS });
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    describe('create and read', () => {
      it('stores a QUEUED task with its request and returns it from get', async () => {
        const created = await store.create(input(7, '{"a":[1,2]}', { configId: 3, dataType: 'application/json' }), CAPS);
        expect(created.taskId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(created).toMatchObject({
          callerId: 7,
          serviceId: 10,
          serviceAccountId: 2,
          status: 'QUEUED',
          createdAt: clock,
          completedAt: null,
          request: { kind: 'raw', configId: 3, dataType: 'application/json', bodyBytes: 11 },
          leaseToken: null,
          leaseUntil: null,
          workerId: null,
          attempt: 0,
          result: null,
          error: null,
        });
        expect(await store.get(created.taskId)).toEqual(created);
        expect((await store.getRequestBody(created.taskId))?.toString()).toBe('{"a":[1,2]}');
        expect(await store.countQueued(7)).toBe(1);
        expect(await store.getResult(created.taskId)).toEqual({ kind: 'pending' });
      });

      it('keeps each creation variant with its config text', async () => {
        const obj = await store.create(input(1, '{"q":1}', { kind: 'object', config: '{"t":0.5}', dataType: 'x' }), CAPS);
        const str = await store.create(input(1, 'plain text', { kind: 'string', config: 'cfg' }), CAPS);
        const bin = await store.create(input(1, Buffer.from([0, 255]), { contentType: 'application/octet-stream', configId: 2 }), CAPS);
        expect((await store.get(obj.taskId))?.request).toEqual({ kind: 'object', config: '{"t":0.5}', dataType: 'x', bodyBytes: 7 });
        expect((await store.get(str.taskId))?.request).toEqual({ kind: 'string', config: 'cfg', bodyBytes: 10 });
        expect((await store.get(bin.taskId))?.request).toEqual({
          kind: 'raw',
          contentType: 'application/octet-stream',
          configId: 2,
          bodyBytes: 2,
        });
      });

      it("lists a caller's tasks newest first, a page at a time, ties in createdAt included", async () => {
        const at = (t: number) => ((clock = t), t);
        at(1_700_000_000_000);
        const old = await store.create(input(5), CAPS);
        at(1_700_000_000_500);
        // Three in the same millisecond: the cursor's task ID keeps each on exactly one page.
        const same = [await store.create(input(5), CAPS), await store.create(input(5), CAPS), await store.create(input(5), CAPS)];
        await store.create(input(6), CAPS); // another caller's
        const expected = [
          ...same
            .map((t) => t.taskId)
            .sort()
            .reverse(),
          old.taskId,
        ];
        const seen: string[] = [];
        let after: { createdAt: number; taskId: string } | undefined;
        for (let page = 0; page < 5; page++) {
          const tasks = await store.listOf(5, { limit: 1, after });
          if (!tasks.length) break;
          seen.push(tasks[0]!.taskId);
          after = { createdAt: tasks[0]!.createdAt, taskId: tasks[0]!.taskId };
        }
        expect(seen).toEqual(expected);
        expect((await store.listOf(5, { limit: 10 })).map((t) => t.taskId)).toEqual(expected);
        expect((await store.listOf(6, { limit: 10 })).map((t) => t.callerId)).toEqual([6]);
        expect(await store.listOf(7, { limit: 10 })).toEqual([]);
      });

      it('answers null / missing for an unknown task', async () => {
        const id = '00000000-0000-4000-8000-000000000000';
        expect(await store.get(id)).toBeNull();
        expect(await store.getRequestBody(id)).toBeNull();
        expect(await store.getResult(id)).toEqual({ kind: 'missing' });
        expect(await store.cancel(id)).toBeNull();
      });

      it('keeps a several-MB request body byte for byte, in file storage', async () => {
        const body = randomBytes(5 * 1024 * 1024 + 7);
        const task = await store.create(input(1, body), CAPS);
        expect(await h.listFiles()).toHaveLength(1);
        const back = await store.getRequestBody(task.taskId);
        expect(back?.length).toBe(body.length);
        expect(back?.equals(body)).toBe(true);
        expect((await store.get(task.taskId))?.request.bodyBytes).toBe(body.length);
      });
    });

    describe('claim, renew, complete, fail', () => {
      it('claims the oldest task: PROCESSING with a lease, once', async () => {
        const first = await store.create(input(1), CAPS);
        clock += 1;
        const second = await store.create(input(2), CAPS);
        const a = await claimed('worker-a');
        expect(a).toMatchObject({
          taskId: first.taskId,
          status: 'PROCESSING',
          leaseUntil: clock + LEASE_MS,
          workerId: 'worker-a',
          attempt: 1,
        });
        const { requestBody, ...record } = a;
        expect(await store.get(first.taskId)).toEqual(record);
        expect(requestBody?.toString()).toBe('{"x":1}');
        expect(await store.countQueued(1)).toBe(0);
        expect(await store.countRunning(1)).toBe(1);
        const b = await claimed('worker-b');
        expect(b.taskId).toBe(second.taskId);
        expect(b.leaseToken).not.toBe(a.leaseToken);
        expect(await claim()).toBeNull();
      });

      it('completes with a short result kept in the record (150 bytes stay inline)', async () => {
        const { taskId } = await store.create(input(), CAPS);
        const task = await claimed();
        clock += 500;
        const body = 'x'.repeat(150);
        expect(await store.complete(taskId, task.leaseToken, result(body, 201))).toBe(true);
        expect(await h.listFiles()).toHaveLength(0);
        expect(await store.get(taskId)).toMatchObject({
          status: 'COMPLETED',
          completedAt: clock,
          leaseToken: null,
          leaseUntil: null,
          result: { statusCode: 201, bodyBytes: 150 },
          error: null,
        });
        const stored = await store.getResult(taskId);
        expect(stored).toMatchObject({
          kind: 'result',
          statusCode: 201,
          headers: { 'content-type': 'application/json', 'x-model.version': '3' },
        });
        expect(stored.kind === 'result' && stored.body.toString()).toBe(body);
        expect(await store.countRunning(1)).toBe(0);
      });

      it('puts a result longer than 150 bytes in file storage and reads it back', async () => {
        const { taskId } = await store.create(input(), CAPS);
        const task = await claimed();
        const body = Buffer.from(JSON.stringify({ text: 'y'.repeat(151) }));
        expect(await store.complete(taskId, task.leaseToken, result(body))).toBe(true);
        expect(await h.listFiles()).toHaveLength(1);
        const stored = await store.getResult(taskId);
        expect(stored.kind === 'result' && stored.body.equals(body)).toBe(true);
      });

      it('counts the bytes each caller keeps stored (request bodies and results), for the storage quota', async () => {
        expect(await store.storedBytes(1)).toBe(0);
        const big = randomBytes(REQUEST_BODY_OVER_INLINE);
        const { taskId } = await store.create(input(1, big), CAPS);
        expect(await store.storedBytes(1)).toBe(big.length);
        const task = await claimed();
        expect(task.taskId).toBe(taskId);
        clock += 1;
        await store.create(input(1, 'abc'), CAPS);
        await store.create(input(2, 'other caller'), CAPS);
        expect(await store.storedBytes(1)).toBe(big.length + 3);
        await store.complete(taskId, task.leaseToken, result('r'.repeat(500)));
        expect(await store.storedBytes(1)).toBe(big.length + 3 + 500);
        expect(await store.storedBytes(2)).toBe('other caller'.length);
        clock += RETENTION_MS + 1;
        await store.purgeExpired();
        expect(await store.storedBytes(1)).toBe(3); // the purged task no longer counts
      });

      it('fails: CANCELED with the error kept', async () => {
        const { taskId } = await store.create(input(), CAPS);
        const task = await claimed();
        const error = { status: 504, code: 'PREDICT_TIMEOUT', message: 'late', args: { service: 's', timeoutSec: '60' } };
        expect(await store.fail(taskId, task.leaseToken, error)).toBe(true);
        expect(await store.get(taskId)).toMatchObject({ status: 'CANCELED', completedAt: clock, error, result: null });
        expect(await store.getResult(taskId)).toEqual({ kind: 'error', ...error });
        expect(await store.fail(taskId, task.leaseToken, error)).toBe(false);
      });

      it('hands the request body over with the claim: inline, several MB from file storage, null when damaged', async () => {
        const big = randomBytes(3 * 1024 * 1024 + 1);
        await store.create(input(1, '{"small":true}'), CAPS);
        clock += 1;
        await store.create(input(1, big), CAPS);
        clock += 1;
        await store.create(input(1, Buffer.alloc(REQUEST_BODY_OVER_INLINE, 3)), CAPS);
        const small = await claimed();
        expect(small.requestBody?.toString()).toBe('{"small":true}');
        const large = await claimed();
        expect(large.requestBody?.equals(big)).toBe(true);
        const files = await h.listFiles();
        expect(files).toHaveLength(2);
        for (const file of files) await h.corruptFile(file);
        const damaged = await claimed();
        expect(damaged.requestBody).toBeNull();
      });

      it('renews many leases in one batch, each fenced by its own token', async () => {
        const tasks = [];
        for (let i = 0; i < 4; i++) {
          await store.create(input(1), CAPS);
          clock += 1;
          tasks.push(await claimed(`w${i}`));
        }
        const [kept, wrongToken, canceled, other] = tasks as [
          ClaimedTask & { leaseToken: string },
          ...Array<ClaimedTask & { leaseToken: string }>,
        ];
        await store.cancel(canceled!.taskId);
        clock += LEASE_MS - 10;
        const held = await store.renewLeases(
          [
            { taskId: kept.taskId, leaseToken: kept.leaseToken },
            { taskId: wrongToken!.taskId, leaseToken: 'not-the-token' },
            { taskId: canceled!.taskId, leaseToken: canceled!.leaseToken },
            { taskId: '00000000-0000-4000-8000-000000000000', leaseToken: 'x' },
          ],
          LEASE_MS,
        );
        expect([...held]).toEqual([kept.taskId]);
        expect((await store.get(kept.taskId))?.leaseUntil).toBe(clock + LEASE_MS);
        expect((await store.get(wrongToken!.taskId))?.leaseUntil).toBe(wrongToken!.leaseUntil);
        expect(await store.get(canceled!.taskId)).toMatchObject({ status: 'CANCELED', leaseUntil: null });
        expect((await store.get(other!.taskId))?.leaseUntil).toBe(other!.leaseUntil); // not in the batch
        expect(await store.renewLeases([], LEASE_MS)).toEqual(new Set());
        // All held: one batch renews them all.
        const both = await store.renewLeases(
          [kept, other!].map(({ taskId, leaseToken }) => ({ taskId, leaseToken })),
          LEASE_MS,
        );
        expect(both).toEqual(new Set([kept.taskId, other!.taskId]));
      });

      it('renews a lease only with the right token, and a renewed lease is not re-claimed', async () => {
        await store.create(input(), CAPS);
        const task = await claimed();
        clock += LEASE_MS - 1;
        expect(await renew(task.taskId, 'not-the-token')).toBe(false);
        expect(await renew(task.taskId, task.leaseToken)).toBe(true);
        expect((await store.get(task.taskId))?.leaseUntil).toBe(clock + LEASE_MS);
        clock += 2;
        expect(await claim('other')).toBeNull();
      });

      it('releases a lease at once for its holder only: the task is claimable now, not when the lease would end', async () => {
        const { taskId } = await store.create(input(), CAPS);
        const a = await claimed('a');
        await store.releaseLeases([{ taskId, leaseToken: 'not-the-token' }]);
        expect(await claim('b')).toBeNull();
        await store.releaseLeases([{ taskId, leaseToken: a.leaseToken }]);
        const b = await claimed('b'); // the clock has not moved
        expect(b).toMatchObject({ taskId, attempt: 2, workerId: 'b' });
        expect(await renew(taskId, a.leaseToken)).toBe(false);
        // Releasing the old holder's lease again changes nothing for the new holder.
        await store.releaseLeases([{ taskId, leaseToken: a.leaseToken }]);
        expect(await claim('c')).toBeNull();
        await store.releaseLeases([]);
      });

      it('does not re-claim before the lease ends, and re-claims after', async () => {
        const { taskId } = await store.create(input(), CAPS);
        const a = await claimed('a');
        clock += LEASE_MS;
        expect(await claim('b')).toBeNull(); // leaseUntil == now: still held
        clock += 1;
        const b = await claimed('b');
        expect(b).toMatchObject({ taskId, attempt: 2, workerId: 'b', leaseUntil: clock + LEASE_MS });
        expect(b.leaseToken).not.toBe(a.leaseToken);
        expect(await store.countRunning(1)).toBe(1);
      });

      it('fences a worker whose lease was lost and re-claimed', async () => {
        const { taskId } = await store.create(input(), CAPS);
        const a = await claimed('a');
        clock += LEASE_MS + 1;
        const b = await claimed('b');
        expect(await renew(taskId, a.leaseToken)).toBe(false);
        expect(await store.complete(taskId, a.leaseToken, result('z'.repeat(400)))).toBe(false);
        expect(await store.fail(taskId, a.leaseToken, { status: 500, code: 'X', message: 'm', args: {} })).toBe(false);
        expect(await store.get(taskId)).toMatchObject({ status: 'PROCESSING', leaseToken: b.leaseToken, attempt: 2 });
        expect(await h.listFiles()).toHaveLength(0); // the refused result left no file behind
        expect(await store.complete(taskId, b.leaseToken, result('ok'))).toBe(true);
        expect(await store.complete(taskId, b.leaseToken, result('again'))).toBe(false);
        const stored = await store.getResult(taskId);
        expect(stored.kind === 'result' && stored.body.toString()).toBe('ok');
      });

      it('claims only tasks of the given services, re-claims included', async () => {
        const of10 = await store.create(input(1), CAPS);
        clock += 1;
        const of20 = await store.create({ ...input(1), serviceId: 20 }, CAPS);
        const only = (serviceIds: number[]) => store.claim({ workerId: 'w', leaseMs: LEASE_MS, maxRunningPerAccount: 50, serviceIds });
        expect(await only([])).toBeNull();
        expect((await only([20, 30]))?.taskId).toBe(of20.taskId);
        expect(await only([20])).toBeNull();
        clock += LEASE_MS + 1;
        expect(await only([30])).toBeNull(); // of20's lease ran out, but it is not a task of service 30
        expect(await only([20])).toMatchObject({ taskId: of20.taskId, attempt: 2 });
        expect((await claim())?.taskId).toBe(of10.taskId);
      });

      it('never hands one task to two concurrent claimers', async () => {
        for (let i = 0; i < 10; i++) await store.create(input(1 + (i % 3)), CAPS);
        const got = await Promise.all(Array.from({ length: 14 }, (_, i) => claim(`w${i}`)));
        const ids = got.flatMap((t) => (t ? [t.taskId] : []));
        expect(ids).toHaveLength(10);
        expect(new Set(ids).size).toBe(10);
      });
    });

    describe('caps', () => {
      it('refuses a task beyond the idle cap with TOO_MANY_IDLE_ASYNC_TASKS, per account', async () => {
        const limits = { maxQueuedPerAccount: 2 };
        await store.create(input(1), limits);
        await store.create(input(1), limits);
        const err: unknown = await store.create(input(1), limits).catch((e: unknown) => e);
        expect(isGatewayError(err) && { code: err.code, status: err.status, args: err.args }).toEqual({
          code: 'TOO_MANY_IDLE_ASYNC_TASKS',
          status: 429,
          args: { account: '1', limit: '2' },
        });
        expect(await store.countQueued(1)).toBe(2);
        clock += 1;
        await store.create(input(2), limits); // another account is not affected
        expect((await claimed()).callerId).toBe(1); // a claimed task no longer waits
        await store.create(input(1), limits);
        const queued = await store.create(input(1), limits).catch((e: unknown) => e);
        expect(isGatewayError(queued) && queued.code).toBe('TOO_MANY_IDLE_ASYNC_TASKS');
        expect(await store.countQueued(1)).toBe(2);
      });

      it('frees idle capacity when a queued task is canceled', async () => {
        const limits = { maxQueuedPerAccount: 1 };
        const { taskId } = await store.create(input(1), limits);
        await expect(store.create(input(1), limits)).rejects.toMatchObject({ code: 'TOO_MANY_IDLE_ASYNC_TASKS' });
        await store.cancel(taskId);
        await store.create(input(1), limits);
      });

      it('skips callers at their running cap and goes on with other callers', async () => {
        const ones = [];
        for (let i = 0; i < 3; i++) {
          ones.push(await store.create(input(1), CAPS));
          clock += 1;
        }
        const two = await store.create(input(2), CAPS);
        const cap = (account: number) => (account === 1 ? 2 : 5);
        const c1 = await claim('w', cap);
        const c2 = await claim('w', cap);
        expect([c1?.taskId, c2?.taskId]).toEqual([ones[0]?.taskId, ones[1]?.taskId]);
        expect((await claim('w', cap))?.taskId).toBe(two.taskId);
        expect(await claim('w', cap)).toBeNull();
        expect(await store.countRunning(1)).toBe(2);
        expect(await store.complete(c1!.taskId, c1!.leaseToken!, result('{}'))).toBe(true);
        expect((await claim('w', cap))?.taskId).toBe(ones[2]?.taskId);
      });

      it('re-claims a crashed worker’s task even when its caller is at the cap', async () => {
        await store.create(input(1), CAPS);
        clock += 1;
        await store.create(input(1), CAPS);
        const first = await claimed();
        clock += LEASE_MS + 1;
        const again = await claim('w2', 1);
        expect(again).toMatchObject({ taskId: first.taskId, attempt: 2 });
        expect(await claim('w3', 1)).toBeNull();
      });
    });

    describe('cancel', () => {
      it('cancels a QUEUED task', async () => {
        const { taskId } = await store.create(input(), CAPS);
        clock += 5;
        expect(await store.cancel(taskId)).toBe('QUEUED');
        expect(await store.get(taskId)).toMatchObject({ status: 'CANCELED', completedAt: clock, error: null, result: null });
        expect(await store.getResult(taskId)).toEqual({ kind: 'missing' });
        expect(await store.countQueued(1)).toBe(0);
        expect(await claim()).toBeNull();
      });

      it('cancels a PROCESSING task; its worker can no longer write', async () => {
        const { taskId } = await store.create(input(), CAPS);
        const task = await claimed();
        expect(await store.cancel(taskId)).toBe('PROCESSING');
        expect(await store.get(taskId)).toMatchObject({ status: 'CANCELED', completedAt: clock, leaseToken: null, leaseUntil: null });
        expect(await store.countRunning(1)).toBe(0);
        expect(await renew(taskId, task.leaseToken)).toBe(false);
        expect(await store.complete(taskId, task.leaseToken, result('late'))).toBe(false);
        clock += LEASE_MS * 2;
        expect(await claim()).toBeNull();
      });

      it('leaves a COMPLETED or CANCELED task unchanged and reports its status', async () => {
        const done = await store.create(input(), CAPS);
        const task = await claimed();
        await store.complete(done.taskId, task.leaseToken, result('r'));
        const canceled = await store.create(input(), CAPS);
        await store.cancel(canceled.taskId);
        const before = [await store.get(done.taskId), await store.get(canceled.taskId)];
        clock += 1000;
        expect(await store.cancel(done.taskId)).toBe('COMPLETED');
        expect(await store.cancel(canceled.taskId)).toBe('CANCELED');
        expect([await store.get(done.taskId), await store.get(canceled.taskId)]).toEqual(before);
        const stored = await store.getResult(done.taskId);
        expect(stored.kind === 'result' && stored.body.toString()).toBe('r');
      });
    });

    describe('retention and damage', () => {
      it('purges tasks final for longer than the retention, with their files', async () => {
        const big = Buffer.alloc(REQUEST_BODY_OVER_INLINE, 1);
        const completed = await store.create(input(1, big), CAPS);
        const t1 = await claimed();
        await store.complete(completed.taskId, t1.leaseToken, result('r'.repeat(1000)));
        const canceled = await store.create(input(1), CAPS);
        await store.cancel(canceled.taskId);
        const running = await store.create(input(2), CAPS);
        expect((await claimed()).taskId).toBe(running.taskId);
        const queued = await store.create(input(1, big), CAPS);
        expect(await h.listFiles()).toHaveLength(3);
        clock += RETENTION_MS;
        expect(await store.purgeExpired()).toBe(0);
        clock += 1;
        expect(await store.purgeExpired(clock)).toBe(2);
        expect(await store.get(completed.taskId)).toBeNull();
        expect(await store.get(canceled.taskId)).toBeNull();
        expect(await store.getResult(completed.taskId)).toEqual({ kind: 'missing' });
        expect(await h.listFiles()).toHaveLength(1); // the queued task's body
        expect((await store.get(queued.taskId))?.status).toBe('QUEUED');
        expect((await store.get(running.taskId))?.status).toBe('PROCESSING');
        expect((await store.getRequestBody(queued.taskId))?.equals(big)).toBe(true);
      });

      it('reports a damaged stored result as corrupted and a damaged body as lost', async () => {
        const { taskId } = await store.create(input(1, Buffer.alloc(REQUEST_BODY_OVER_INLINE, 2)), CAPS);
        const [requestFile] = await h.listFiles();
        const task = await claimed();
        await store.complete(taskId, task.leaseToken, result('c'.repeat(300)));
        const resultFile = (await h.listFiles()).find((f) => f !== requestFile);
        await h.corruptFile(resultFile!);
        expect(await store.getResult(taskId)).toEqual({ kind: 'corrupted' });
        await h.corruptFile(requestFile!);
        expect(await store.getRequestBody(taskId)).toBeNull();
      });
    });
  });
}

/**
 * Two handles on one store (two processes on one SQLite file, two gateways on one MongoDB): 30 tasks
 * created through both, claimed by 4 workers on each at once; every task is claimed exactly once.
 */
export async function expectNoDoubleClaims(a: TaskStore, b: TaskStore): Promise<void> {
  const created = new Set<string>();
  for (let i = 0; i < 30; i++) created.add((await (i % 2 ? a : b).create(input(1 + (i % 4)), { maxQueuedPerAccount: 250 })).taskId);
  const claims: TaskRecord[] = [];
  const worker = async (store: TaskStore, name: string): Promise<void> => {
    for (;;) {
      const task = await store.claim({ workerId: name, leaseMs: 60_000, maxRunningPerAccount: 50 });
      if (!task) return;
      claims.push(task);
    }
  };
  await Promise.all([0, 1, 2, 3].flatMap((i) => [worker(a, `a${i}`), worker(b, `b${i}`)]));
  const ids = claims.map((t) => t.taskId);
  expect(ids).toHaveLength(30);
  expect(new Set(ids)).toEqual(created);
  expect(claims.every((t) => t.attempt === 1)).toBe(true);
}
