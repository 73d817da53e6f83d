/**
 * The JSON the fitting endpoints answer with. Field names follow the shapes the platform SDKs read
 * (reference/service-protocol.md section 5: `JobStatusData`, the dataset list, the fit-config list),
 * extended with this gateway's job statuses and percentage. Times are Unix milliseconds, as in
 * AsyncTaskData. Host paths (model directories) are not shown.
 */
import type { PluginContext, ServiceEntry } from '../../core/plugins/index.js';
import { isFinalJobStatus, type DatasetRecord, type DerivedServiceRecord, type JobRecord } from './store/fitting-store.js';

type Names = Pick<PluginContext['directory'], 'findAccount' | 'serviceById'>;

export interface ServiceRef {
  id: { accountId: number; modelId: number };
  name: string | null;
  accountName: string | null;
}

function serviceRef(directory: Names, accountId: number, modelId: number): ServiceRef {
  const service = directory.serviceById(modelId);
  return { id: { accountId, modelId }, name: service?.name ?? null, accountName: directory.findAccount(accountId)?.name ?? null };
}

export function derivedView(directory: Names, record: DerivedServiceRecord, base: ServiceEntry | undefined) {
  return {
    id: { accountId: record.accountId, modelId: record.id },
    name: record.name,
    accountName: directory.findAccount(record.accountId)?.name ?? null,
    description: record.description,
    baseService: base
      ? serviceRef(directory, base.accountId, base.id)
      : { id: { accountId: null, modelId: record.baseServiceId }, name: null, accountName: null },
    /** Predict works once true: the latest successful fit's model is in use. */
    fitted: record.modelDir !== null,
    fittedAt: record.fittedAt,
    fittedByJobId: record.fittedByJobId,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function jobView(directory: Names, job: JobRecord) {
  const base = directory.serviceById(job.baseServiceId);
  return {
    jobId: job.jobId,
    accountId: job.accountId,
    jobType: 'FIT',
    status: job.status,
    /** The same as `status`, under the name the platform SDKs' JobStatusData uses. */
    state: job.status,
    percentage: job.percentage,
    done: isFinalJobStatus(job.status),
    error: job.status === 'FAILED',
    errorCode: job.error?.code ?? null,
    errorMessage: job.error?.message ?? null,
    service: serviceRef(directory, job.accountId, job.serviceId),
    baseService: base ? serviceRef(directory, base.accountId, base.id) : null,
    datasetId: job.datasetId,
    configId: job.configId,
    config: job.config === null ? null : (JSON.parse(job.config) as unknown),
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    updatedAt: job.updatedAt,
    completedAt: job.completedAt,
  };
}

export function datasetView(directory: Names, dataset: DatasetRecord) {
  return {
    id: { accountId: dataset.accountId, datasetId: dataset.id },
    name: dataset.name,
    datasetAccountName: directory.findAccount(dataset.accountId)?.name ?? null,
    description: dataset.description,
    dataType: dataset.dataType,
    accessMode: 'private',
    encoding: dataset.encoding,
    size: dataset.size,
    hasTargets: dataset.targetsSize !== null,
    targetsSize: dataset.targetsSize,
    createdAt: dataset.createdAt,
  };
}

/** The fit-config list as the SDKs read it: `config` is JSON text. */
export function fitConfigView(service: ServiceEntry) {
  return service.fitConfigs.map((c) => ({
    id: { accountId: service.accountId, modelId: service.id, configId: c.id },
    name: c.name ?? `config-${c.id}`,
    isDefault: c.default,
    isManual: false,
    config: JSON.stringify(c.config),
  }));
}
