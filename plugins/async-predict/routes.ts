/**
 * The endpoints of spec section 4.1 under /api/platformgateway. Creation admits the caller like any
 * predict request (MODEL_REQUESTS, the rate limit, access to the service), reads and checks the body
 * and the predict config (requests.ts), stores the task and wakes the local workers. The task
 * endpoints need READ_DATA (status, result) or MODIFY_DATA (cancel), and answer only the account
 * that created the task.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import {
  callerOf,
  gatewayError,
  gatewayErrorFromTask,
  isAllowedServiceHeader,
  serviceOf,
  type PluginContext,
  type TaskCursor,
  type TaskRecord,
} from '../../core/plugins/index.js';
import { queuedCap } from './limits.js';
import type { AsyncPredictOptions } from './options.js';
import { createTaskReaders, type TaskReader } from './requests.js';
import type { WorkerPool } from './worker-pool.js';

const ACCOUNT = '/api/platformgateway/account/:account';
const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function mountRoutes(router: Router, ctx: PluginContext<AsyncPredictOptions>, pool: WorkerPool): void {
  const { store, admission, pipeline } = ctx;
  const readers = createTaskReaders(ctx);

  const create = (read: TaskReader) => async (koa: Context) => {
    const caller = callerOf(koa);
    const service = serviceOf(koa);
    if (!ctx.options.acceptWithoutInstances && !ctx.gate.canServe(service.id)) {
      throw gatewayError('NO_ACTIVE_INSTANCES', { args: { service: service.name } });
    }
    const request = await read(koa, service);
    await pipeline.checkStorage(caller, request.body.length);
    const task = await store.create(
      {
        callerId: caller.account.id,
        serviceId: service.id,
        serviceAccountId: service.accountId,
        request: { ...request, keyName: caller.keyName },
      },
      { maxQueuedPerAccount: queuedCap(caller.account.requestsPerSecond) },
    );
    ctx.events.emit('task', { status: 'QUEUED' });
    // Usage counts the task as one request of its service now: the worker's call later belongs to no request.
    ctx.http.reportService(koa, caller, service);
    pool.wake();
    koa.type = 'application/json';
    koa.body = JSON.stringify(task.taskId);
  };

  const admitted = admission.service();
  router.post(`${ACCOUNT}/model/:model/async/predict`, admitted, create(readers.raw));
  router.post(`${ACCOUNT}/model/:model/async/predict-with-config`, admitted, create(readers.object));
  router.post(`${ACCOUNT}/model/:model/async/predict-with-config-v2`, admitted, create(readers.string));

  /** The task named in the path, when the caller (admitted for its own account) created it. */
  const ownTask = async (koa: Context): Promise<TaskRecord> => {
    const caller = callerOf(koa);
    const accountRef = koa.params.account ?? '';
    const taskId = koa.params.taskId ?? '';
    const task = TASK_ID.test(taskId) ? await store.get(taskId.toLowerCase()) : null;
    if (!task) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'task', id: taskId } });
    if (task.callerId !== caller.account.id) {
      throw gatewayError('ACCESS_TO_ANOTHER_ACCOUNT_DENIED', {
        args: { account: accountRef },
        message: `Task '${taskId}' belongs to another account`,
      });
    }
    return task;
  };

  const reading = [admission.caller('READ_DATA'), admission.ownAccount] as const;
  // The caller's own tasks, newest first, a page at a time (not in the specification, which leaves the
  // caller to keep its task IDs: the console's tasks page lists them, and so can any client).
  router.get(`${ACCOUNT}/async/tasks`, ...reading, async (koa) => {
    const caller = callerOf(koa);
    const limit = listLimit(koa.query.limit);
    const after = cursorOf(koa.query.after);
    const tasks = await store.listOf(caller.account.id, { limit: limit + 1, after });
    const page = tasks.slice(0, limit);
    const last = page.at(-1);
    koa.body = {
      tasks: page.map(statusOf),
      next: tasks.length > limit && last ? `${last.createdAt}.${last.taskId}` : null,
    };
  });

  router.get(`${ACCOUNT}/async/task/:taskId`, ...reading, async (koa) => {
    koa.body = statusOf(await ownTask(koa));
  });

  router.get(`${ACCOUNT}/async/task/:taskId/response`, ...reading, async (koa) => {
    const { taskId } = await ownTask(koa);
    const stored = await store.getResult(taskId);
    switch (stored.kind) {
      case 'pending':
        koa.status = 204;
        return;
      case 'result':
        // The service's status and allowed headers, as sync predict serves them; the body is always
        // JSON here (a protobuf answer is stored in its JSON form), so the type is the gateway's.
        // 204 means "not done yet" on this endpoint, so a service's own 204 is served as 200.
        for (const [name, value] of Object.entries(stored.headers)) {
          if (isAllowedServiceHeader(name, value) && name.toLowerCase() !== 'content-type') koa.set(name, value);
        }
        koa.status = stored.statusCode >= 200 && stored.statusCode <= 599 && stored.statusCode !== 204 ? stored.statusCode : 200;
        koa.type = 'application/json';
        koa.body = stored.body;
        return;
      case 'error':
        throw gatewayErrorFromTask(stored);
      case 'corrupted':
        throw gatewayError('ASYNC_RESPONSE_IS_CORRUPTED', { args: { taskId } });
      case 'missing':
        throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'result of task', id: taskId } });
    }
  });

  router.post(`${ACCOUNT}/async/task/:taskId/cancel`, admission.caller('MODIFY_DATA'), admission.ownAccount, async (koa) => {
    const { taskId } = await ownTask(koa);
    const before = await store.cancel(taskId);
    if (before === null) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'task', id: taskId } });
    if (before === 'PROCESSING') pool.cancelLocal(taskId);
    if (before === 'QUEUED' || before === 'PROCESSING') ctx.events.emit('task', { status: 'CANCELED' });
    koa.status = 200;
    koa.body = '';
    koa.remove('Content-Type'); // an empty body, not an empty text
  });
}

/** What the status endpoints show of a task. */
function statusOf({ taskId, callerId, status, createdAt, completedAt }: TaskRecord) {
  return { taskId, callerId, status, createdAt, completedAt };
}

/** Tasks per page of the list: `limit` in 1..MAX_LIST_LIMIT, DEFAULT_LIST_LIMIT when absent. */
const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 100;

function listLimit(value: unknown): number {
  if (value === undefined) return DEFAULT_LIST_LIMIT;
  const limit = typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIST_LIMIT)) {
    throw gatewayError('VALIDATION_FAILED', {
      param: 'limit',
      args: { reason: `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}` },
    });
  }
  return limit;
}

/** The `after` cursor of a page (`next` of the previous one: `<createdAt>.<taskId>`). */
function cursorOf(value: unknown): TaskCursor | undefined {
  if (value === undefined) return undefined;
  const match = typeof value === 'string' ? /^(\d{1,15})\.([0-9a-f-]{36})$/.exec(value) : null;
  if (!match || !TASK_ID.test(match[2]!))
    throw gatewayError('VALIDATION_FAILED', { param: 'after', args: { reason: "after must be a page's next cursor" } });
  return { createdAt: Number(match[1]), taskId: match[2]! };
}
