/**
 * The endpoints of spec section 4.1 under /api/platformgateway. Creation admits the caller like any
 * predict request (MODEL_REQUESTS, the rate limit, access to the service), reads and checks the body
 * and the predict config (requests.ts), stores the task and wakes the local workers. The task
 * endpoints need READ_DATA (status, result) or MODIFY_DATA (cancel), and answer only the account
 * that created the task.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { gatewayError, gatewayErrorFromTask, type Permission, type PluginContext, type TaskRecord } from '../../core/plugins/index.js';
import { queuedCap } from './limits.js';
import type { AsyncPredictOptions } from './options.js';
import { createTaskReaders, type TaskReader } from './requests.js';
import type { WorkerPool } from './worker-pool.js';

const ACCOUNT = '/api/platformgateway/account/:account';
const KEY_HEADER = 'PLATFORM-API-KEY';
const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function mountRoutes(router: Router, ctx: PluginContext<AsyncPredictOptions>, pool: WorkerPool): void {
  const { pipeline, store } = ctx;
  const readers = createTaskReaders(ctx);

  const create = (read: TaskReader) => async (koa: Context) => {
    const { caller, service } = pipeline.admit({
      apiKey: koa.get(KEY_HEADER) || undefined,
      keyHeader: KEY_HEADER,
      permission: 'MODEL_REQUESTS',
      account: koa.params.account ?? '',
      model: koa.params.model ?? '',
    });
    if (!ctx.options.acceptWithoutInstances && !ctx.gate.hasInstances(service.id)) {
      throw gatewayError('NO_ACTIVE_INSTANCES', { args: { service: service.name } });
    }
    const request = await read(koa, service);
    const task = await store.create(
      { callerId: caller.account.id, serviceId: service.id, serviceAccountId: service.accountId, request },
      { maxQueuedPerAccount: queuedCap(caller.account.requestsPerSecond) },
    );
    ctx.events.emit('task', { status: 'QUEUED' });
    pool.wake();
    koa.type = 'application/json';
    koa.body = JSON.stringify(task.taskId);
  };

  router.post(`${ACCOUNT}/model/:model/async/predict`, create(readers.raw));
  router.post(`${ACCOUNT}/model/:model/async/predict-with-config`, create(readers.object));
  router.post(`${ACCOUNT}/model/:model/async/predict-with-config-v2`, create(readers.string));

  /** The task named in the path, when the caller's key has `permission` and the caller created it. */
  const ownTask = async (koa: Context, permission: Permission): Promise<TaskRecord> => {
    const caller = pipeline.authenticate(koa.get(KEY_HEADER) || undefined, KEY_HEADER, permission);
    const accountRef = koa.params.account ?? '';
    if (ctx.directory.findAccount(accountRef)?.id !== caller.account.id) {
      throw gatewayError('ACCESS_TO_ANOTHER_ACCOUNT_DENIED', { args: { account: accountRef } });
    }
    const taskId = koa.params.taskId ?? '';
    const task = TASK_ID.test(taskId) ? await store.get(taskId.toLowerCase()) : null;
    if (!task) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'task', id: taskId } });
    if (task.callerId !== caller.account.id) {
      throw gatewayError('ACCESS_TO_ANOTHER_ACCOUNT_DENIED', { args: { account: accountRef }, message: `Task '${taskId}' belongs to another account` });
    }
    return task;
  };

  router.get(`${ACCOUNT}/async/task/:taskId`, async (koa) => {
    const { taskId, callerId, status, createdAt, completedAt } = await ownTask(koa, 'READ_DATA');
    koa.body = { taskId, callerId, status, createdAt, completedAt };
  });

  router.get(`${ACCOUNT}/async/task/:taskId/response`, async (koa) => {
    const { taskId } = await ownTask(koa, 'READ_DATA');
    const stored = await store.getResult(taskId);
    switch (stored.kind) {
      case 'pending':
        koa.status = 204;
        return;
      case 'result':
        koa.status = 200;
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

  router.post(`${ACCOUNT}/async/task/:taskId/cancel`, async (koa) => {
    const { taskId } = await ownTask(koa, 'MODIFY_DATA');
    const before = await store.cancel(taskId);
    if (before === null) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'task', id: taskId } });
    if (before === 'PROCESSING') pool.cancelLocal(taskId);
    if (before === 'QUEUED' || before === 'PROCESSING') ctx.events.emit('task', { status: 'CANCELED' });
    koa.status = 200;
    koa.body = '';
    koa.remove('Content-Type'); // an empty body, not an empty text
  });
}
