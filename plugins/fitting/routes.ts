/**
 * The fitting endpoints (spec 4.4, plus what using them needs: dataset upload, read and delete, job
 * cancel, derived-service list, read and delete). Every route takes `PLATFORM-API-KEY`. Reading needs
 * READ_DATA; creating, deleting and canceling need MODIFY_DATA; `fit` needs MODIFY_DATA and
 * MODEL_REQUESTS (it changes a service and runs a model). Fits, dataset uploads and derived-service
 * creation count against the account's rate limit (they store data or start work). Admission is
 * core's middleware (`ctx.admission`).
 * Datasets, jobs and derived services belong to the account that created them: another account's
 * are refused with 403 ACCESS_TO_ANOTHER_ACCOUNT_DENIED, missing ones are 404 ENTITY_NOT_FOUND_BY_ID.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { callerOf, compileRequestSchema, gatewayError, type Caller, type ServiceEntry } from '../../core/plugins/index.js';
import datasetQuerySchema from '../../schemas/fitting/dataset-raw-query.schema.json' with { type: 'json' };
import datasetSchema from '../../schemas/fitting/dataset.schema.json' with { type: 'json' };
import derivedSchema from '../../schemas/fitting/derived.schema.json' with { type: 'json' };
import fitSchema from '../../schemas/fitting/fit.schema.json' with { type: 'json' };
import type { FittingRuntime } from './runtime.js';
import type { DatasetRecord, DerivedServiceRecord, JobRecord } from './store/fitting-store.js';
import { datasetView, derivedView, fitConfigView, jobView } from './views.js';

/** The spec's `{gate}` prefix, and `{core}`, where the platform's Java SDK sends fit and job calls. */
export const PREFIXES = ['/api/platformgate', '/api/platformcore'];

/** Dataset, derived-service and job IDs: positive int64 numbers (within a double's exact range). */
const NUMERIC_ID = /^[1-9][0-9]{0,15}$/;
const JOB_LIST_LIMIT = 100;

interface DerivedBody {
  name: string;
  description?: string;
}

interface FitBody {
  datasetId: number | string;
  config?: Record<string, unknown> | null;
  configId?: number | string | null;
}

interface DatasetBody {
  name: string;
  description?: string;
  dataType?: string;
  content: unknown;
  targets?: unknown;
}

interface DatasetQuery {
  name: string;
  description?: string;
  dataType?: string;
}

export function mountRoutes(router: Router, runtime: FittingRuntime): void {
  const { ctx, derived } = runtime;
  const { pipeline, directory, gate, http, options, admission } = ctx;
  const readDerived = compileRequestSchema<DerivedBody>(derivedSchema);
  const readFit = compileRequestSchema<FitBody>(fitSchema);
  const readDataset = compileRequestSchema<DatasetBody>(datasetSchema);
  const readDatasetQuery = compileRequestSchema<DatasetQuery>(datasetQuerySchema, 'query');

  const notFound = (entity: string, id: string | number, param?: string) =>
    gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity, id }, ...(param ? { param } : {}) });
  const othersEntity = (entity: string, id: string | number, param?: string) =>
    gatewayError('ACCESS_TO_ANOTHER_ACCOUNT_DENIED', {
      message: `The ${entity} '${id}' belongs to another account`,
      args: { id },
      ...(param ? { param } : {}),
    });

  const ownDataset = async (caller: Caller, ref: string, param?: string): Promise<DatasetRecord> => {
    const { store } = runtime.opened;
    const dataset = NUMERIC_ID.test(ref) ? await store.getDataset(Number(ref)) : null;
    if (!dataset) throw notFound('dataset', ref, param);
    if (dataset.accountId !== caller.account.id) throw othersEntity('dataset', ref, param);
    return dataset;
  };

  const ownJob = async (caller: Caller, ref: string): Promise<JobRecord> => {
    const { store } = runtime.opened;
    const job = NUMERIC_ID.test(ref) ? await store.getJob(Number(ref)) : null;
    if (!job) throw notFound('job', ref);
    if (job.accountId !== caller.account.id) throw othersEntity('job', ref);
    return job;
  };

  /** The caller's derived service `ref` (ID or name); a configured service there is a 400. */
  const ownDerived = async (caller: Caller, ref: string): Promise<DerivedServiceRecord> => {
    const { store } = runtime.opened;
    const record = NUMERIC_ID.test(ref)
      ? await store.getDerived(Number(ref))
      : ((await store.listDerived(caller.account.id)).find((d) => d.name === ref) ?? null);
    if (record && record.accountId !== caller.account.id) throw othersEntity('derived service', ref);
    if (record) return record;
    const configured = directory.findService(caller.account, ref);
    if (configured && !configured.base) {
      throw gatewayError('SERVICE_NOT_FITTABLE', {
        args: {
          service: configured.name,
          reason: 'is not a derived service: create one with POST …/model/{model}/derived from a fittable service and fit that',
        },
      });
    }
    throw notFound('derived service', ref);
  };

  /** A fittable service the caller may use (the base of a derived service counts for fit-config). */
  const fittableService = (caller: Caller, koa: Context, forReading: boolean): ServiceEntry => {
    const service = directory.service(koa.params.account ?? '', koa.params.model ?? '');
    pipeline.checkAccess(caller, service, { account: koa.params.account ?? '', model: koa.params.model ?? '' });
    const base = forReading && service.base ? directory.serviceById(service.base.serviceId) : service;
    if (!base || base.base)
      throw gatewayError('SERVICE_NOT_FITTABLE', {
        args: { service: service.name, reason: 'is a derived service: fit it again instead of deriving from it' },
      });
    if (!base.fittable) throw gatewayError('SERVICE_NOT_FITTABLE', { args: { service: base.name } });
    return base;
  };

  const baseView = (record: DerivedServiceRecord) => derivedView(directory, record, directory.serviceById(record.baseServiceId));

  for (const prefix of PREFIXES) {
    const account = `${prefix}/account/:account`;
    const model = `${account}/model/:model`;

    router.post(`${model}/derived`, admission.caller('MODIFY_DATA'), admission.counted, async (koa) => {
      const caller = callerOf(koa);
      const base = fittableService(caller, koa, false);
      const raw = await http.readRawBody(koa);
      const body = readDerived(
        raw.length > 0 ? http.parseJson(raw.toString('utf8')) : { ...(typeof koa.query.name === 'string' ? { name: koa.query.name } : {}) },
      );
      const clash = directory.findService(caller.account, body.name);
      const { store } = runtime.opened;
      if (clash)
        throw gatewayError('CONFLICT', { param: 'name', args: { reason: `The account already has a service named '${body.name}'` } });
      let id: number;
      do id = options.derivedIdStart - 1 + (await store.nextId('derived'));
      while (directory.serviceById(id));
      const record = await store.createDerived({
        id,
        accountId: caller.account.id,
        name: body.name,
        description: body.description ?? '',
        baseServiceId: base.id,
      });
      derived.register(record);
      ctx.logger.info({ serviceId: id, baseServiceId: base.id, accountId: caller.account.id }, 'derived service created');
      koa.body = baseView(record);
    });

    router.get(`${model}/fit-config`, admission.caller('READ_DATA'), (koa) => {
      const caller = callerOf(koa);
      koa.body = fitConfigView(fittableService(caller, koa, true));
    });

    router.post(`${model}/fit`, admission.caller('MODIFY_DATA', 'MODEL_REQUESTS'), admission.counted, admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const service = await ownDerived(caller, koa.params.model ?? '');
      const raw = await http.readJson(koa);
      const given = (raw ?? {}) as Partial<FitBody>;
      if (given.config != null && given.configId != null) {
        throw gatewayError('VALIDATION_FAILED', { param: 'configId', args: { reason: 'give either config or configId, not both' } });
      }
      const body = readFit(raw);
      const base = directory.serviceById(service.baseServiceId);
      if (!base)
        throw gatewayError('SERVICE_NOT_FITTABLE', {
          args: { service: service.name, reason: 'cannot be fitted: its base service is no longer configured' },
        });
      const dataset = await ownDataset(caller, String(body.datasetId), 'datasetId');
      const chosen = chooseConfig(base, body);
      if (!gate.hasInstances(base.id)) throw gatewayError('NO_ACTIVE_INSTANCES', { args: { service: base.name } });

      const { store, runner } = runtime.opened;
      const jobId = await store.nextId('job');
      const job = await store.createJob({
        jobId,
        accountId: caller.account.id,
        serviceId: service.id,
        baseServiceId: base.id,
        datasetId: dataset.id,
        configId: chosen.configId,
        config: chosen.config === undefined ? null : JSON.stringify(chosen.config),
        modelDir: join(runtime.modelRoot, String(service.id), String(jobId)),
        previousModelDir: service.modelDir,
        runnerId: runner.runnerId,
        leaseMs: options.leaseMs,
      });
      runner.launch(job, { base, serviceName: service.name, dataset, headers: http.serviceHeaders(koa, caller) });
      ctx.logger.info({ jobId, serviceId: service.id, datasetId: dataset.id, configId: chosen.configId }, 'fitting job created');
      ctx.events.emit('fitJob', { status: 'PENDING' });
      koa.body = jobView(directory, job);
    });

    router.get(`${account}/derived`, admission.caller('READ_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const { store } = runtime.opened;
      koa.body = (await store.listDerived(caller.account.id)).map(baseView);
    });

    router.get(`${account}/derived/:model`, admission.caller('READ_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      koa.body = baseView(await ownDerived(caller, koa.params.model ?? ''));
    });

    router.delete(`${account}/derived/:model`, admission.caller('MODIFY_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const service = await ownDerived(caller, koa.params.model ?? '');
      const { store } = runtime.opened;
      const outcome = await store.deleteDerived(service.id);
      if (outcome === 'busy')
        throw gatewayError('CONFLICT', { args: { reason: `Service '${service.name}' has a fitting job running; cancel it first` } });
      derived.unregister(service.id);
      await rm(join(runtime.modelRoot, String(service.id)), { recursive: true, force: true }).catch(() => undefined);
      koa.status = 204;
    });

    router.get(`${account}/dataset`, admission.caller('READ_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const { store } = runtime.opened;
      koa.body = (await store.listDatasets(caller.account.id)).map((d) => datasetView(directory, d));
    });

    router.post(`${account}/dataset`, admission.caller('MODIFY_DATA'), admission.counted, admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      if (!koa.request.is('json')) {
        throw gatewayError('UNSUPPORTED_MEDIA_TYPE', {
          args: { contentType: koa.get('content-type'), expected: 'application/json (or POST …/dataset/raw for raw content)' },
        });
      }
      const body = readDataset(await http.readJson(koa));
      const content = asBytes(body.content);
      if (content.length === 0) throw gatewayError('VALIDATION_FAILED', { param: 'content', args: { reason: 'content is empty' } });
      const dataType = body.dataType ?? (typeof body.content === 'string' ? 'text/plain' : 'application/json');
      const targets = body.targets === undefined ? null : asBytes(body.targets);
      koa.body = datasetView(directory, await createDataset(caller, body.name, body.description, dataType, content, targets, 'text'));
    });

    router.post(`${account}/dataset/raw`, admission.caller('MODIFY_DATA'), admission.counted, admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const query = readDatasetQuery({ ...koa.query });
      const content = await http.readRawBody(koa);
      if (content.length === 0)
        throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'the body is empty; send the dataset content' } });
      const dataType = query.dataType ?? (koa.get('content-type') || 'application/octet-stream');
      if (!PRINTABLE.test(dataType)) {
        throw gatewayError('VALIDATION_FAILED', {
          param: 'dataType',
          args: { reason: 'dataType (here the Content-Type) must be printable ASCII of at most 500 characters' },
        });
      }
      const encoding = isUtf8(content) ? 'text' : 'binary';
      koa.body = datasetView(directory, await createDataset(caller, query.name, query.description, dataType, content, null, encoding));
    });

    router.get(`${account}/dataset/:datasetId`, admission.caller('READ_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      koa.body = datasetView(directory, await ownDataset(caller, koa.params.datasetId ?? ''));
    });

    router.get(`${account}/dataset/:datasetId/content`, admission.caller('READ_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const dataset = await ownDataset(caller, koa.params.datasetId ?? '');
      const { store } = runtime.opened;
      const stored = await store.readDataset(dataset.id);
      if (!stored) throw notFound('dataset', dataset.id);
      const wantTargets = koa.query.part === 'targets';
      const bytes = wantTargets ? stored.targets : stored.content;
      if (!bytes) throw notFound('targets of dataset', dataset.id);
      koa.set('X-Content-Type-Options', 'nosniff');
      koa.set('Content-Disposition', 'attachment');
      koa.type = MEDIA_TYPE.test(dataset.dataType)
        ? dataset.dataType
        : dataset.encoding === 'text'
          ? 'text/plain; charset=utf-8'
          : 'application/octet-stream';
      koa.body = bytes;
    });

    router.delete(`${account}/dataset/:datasetId`, admission.caller('MODIFY_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const dataset = await ownDataset(caller, koa.params.datasetId ?? '');
      const { store } = runtime.opened;
      await store.deleteDataset(dataset.id);
      koa.status = 204;
    });

    router.get(`${account}/job`, admission.caller('READ_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const { store } = runtime.opened;
      koa.body = (await store.listJobs(caller.account.id, JOB_LIST_LIMIT)).map((j) => jobView(directory, j));
    });

    router.get(`${account}/job/:jobId`, admission.caller('READ_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      koa.body = jobView(directory, await ownJob(caller, koa.params.jobId ?? ''));
    });

    router.post(`${account}/job/:jobId/cancel`, admission.caller('MODIFY_DATA'), admission.ownAccount, async (koa) => {
      const caller = callerOf(koa);
      const job = await ownJob(caller, koa.params.jobId ?? '');
      const { store, runner } = runtime.opened;
      const after = (await store.cancelJob(job.jobId)) ?? job;
      // The record first: the runner then sees a CANCELED job and writes nothing over it.
      if (after.status === 'CANCELED') runner.abort(job.jobId);
      if (after.status === 'CANCELED' && job.status !== 'CANCELED') ctx.events.emit('fitJob', { status: 'CANCELED' });
      koa.body = jobView(directory, after);
    });
  }

  async function createDataset(
    caller: Caller,
    name: string,
    description: string | undefined,
    dataType: string,
    content: Buffer,
    targets: Buffer | null,
    encoding: 'text' | 'binary',
  ): Promise<DatasetRecord> {
    await pipeline.checkStorage(caller, content.length + (targets?.length ?? 0));
    const { store } = runtime.opened;
    const id = await store.nextId('dataset');
    const record = await store.createDataset({
      id,
      accountId: caller.account.id,
      name,
      description: description ?? '',
      dataType,
      encoding,
      content,
      targets,
    });
    ctx.logger.info({ datasetId: id, accountId: caller.account.id, size: content.length }, 'dataset created');
    return record;
  }
}

/** What a dataType may hold: it is sent back as a Content-Type, where other characters are a 500. */
const PRINTABLE = /^[\x20-\x7E]{1,500}$/;
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;.*)?$/i;

/** The config a fit sends: its own, else the named one, else the base service's default, else none. */
function chooseConfig(base: ServiceEntry, body: FitBody): { configId: number | null; config: unknown } {
  if (body.config != null) return { configId: null, config: body.config };
  if (body.configId != null) {
    const found = base.fitConfigs.find((c) => String(c.id) === String(body.configId));
    if (!found)
      throw gatewayError('ENTITY_NOT_FOUND_BY_ID', {
        param: 'configId',
        args: { entity: `fitting config of service '${base.name}'`, id: body.configId },
      });
    return { configId: found.id, config: found.config };
  }
  const fallback = base.fitConfigs.find((c) => c.default);
  return fallback ? { configId: fallback.id, config: fallback.config } : { configId: null, config: undefined };
}

/** Text as given; any other JSON value as its JSON text. */
function asBytes(value: unknown): Buffer {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function isUtf8(bytes: Buffer): boolean {
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}
