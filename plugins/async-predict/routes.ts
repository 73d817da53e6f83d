/**
 * The endpoints of spec section 4.1 under /api/platformgateway. Creation admits the caller like any
 * predict request (MODEL_REQUESTS, the rate limit, access to the service), validates the predict
 * config, stores the task and wakes the local workers. The task endpoints need READ_DATA (status,
 * result) or MODIFY_DATA (cancel), and answer only the account that created the task.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import {
  gatewayError, gatewayErrorFromTask,
  type Permission, type PluginContext, type ServiceEntry, type TaskRecord, type TaskRequestInput,
} from '../../core/plugins/index.js';
import { queuedCap } from './limits.js';
import type { AsyncPredictOptions } from './options.js';
import { objectTask, rawTask, stringTask, type NewTask } from './transform.js';
import type { WorkerPool } from './worker-pool.js';

const ACCOUNT = '/api/platformgateway/account/:account';
const KEY_HEADER = 'PLATFORM-API-KEY';
const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function mountRoutes(router: Router, ctx: PluginContext<AsyncPredictOptions>, pool: WorkerPool): void {
  const { pipeline, store, http } = ctx;

  const create = (read: (koa: Context) => Promise<NewTask>) => async (koa: Context) => {
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
    const request = withConfig(ctx, service, await read(koa));
    const task = await store.create(
      { callerId: caller.account.id, serviceId: service.id, serviceAccountId: service.accountId, request },
      { maxQueuedPerAccount: queuedCap(caller.account.requestsPerSecond) },
    );
    pool.wake();
    koa.type = 'application/json';
    koa.body = JSON.stringify(task.taskId);
  };

  router.post(`${ACCOUNT}/model/:model/async/predict`, create(async (koa) => rawTask(await http.readRawBody(koa), koa.query, koa.get('content-type') || undefined)));
  router.post(`${ACCOUNT}/model/:model/async/predict-with-config`, create(async (koa) => objectTask(await http.readJson(koa))));
  router.post(`${ACCOUNT}/model/:model/async/predict-with-config-v2`, create(async (koa) => stringTask(await http.readJson(koa))));

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
    koa.status = 200;
    koa.body = '';
  });
}

/**
 * Applies the service's default config when the request gives none (named config `configId` for the
 * raw variant), and validates the config that will be sent, before the task is stored.
 */
function withConfig(ctx: PluginContext<AsyncPredictOptions>, service: ServiceEntry, made: NewTask): TaskRequestInput {
  const { request } = made;
  let config = made.config;
  if (config === undefined) {
    const named = ctx.pipeline.namedConfig(service, made.configId);
    if (named !== undefined) {
      config = named;
      request.config = JSON.stringify(named);
    }
  }
  if (config !== undefined) ctx.pipeline.validateConfig(service, config);
  return request;
}
