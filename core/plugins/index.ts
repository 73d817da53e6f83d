/** The public surface for plugins: everything a plugin may import from core. */
export { definePlugin, type PluginContext, type PluginDefinition, type PluginInstance } from './define-plugin.js';
export {
  asChatAdapterError,
  errorHeaders,
  gatewayError,
  GatewayError,
  renderErrorBody,
  toGatewayError,
  type ErrorBody,
  type ErrorCode,
  type UpstreamErrorFields,
} from '../errors.js';
export { useErrorRenderer, type ErrorRenderer } from '../http/app.js';
export type { Storage, StorageKind, StoreChoices } from '../storage/storage.js';
export { DuplicateKeyError, isDuplicateKey } from '../storage/port.js';
export type { Collection, CollectionSpec, Doc, DocStore, Filter, Update } from '../storage/port.js';
export { LeaseKeeper, type LeaseKeeperOptions } from '../storage/lease-keeper.js';
export {
  gatewayErrorFromTask,
  taskErrorFrom,
  type StoredResult,
  type ClaimedTask,
  type TaskCursor,
  type TaskLease,
  type TaskRecord,
  type TaskRequestInfo,
  type TaskRequestInput,
  type TaskResult,
  type TaskStore,
} from '../tasks/task-store.js';
export type { Caller, ServiceChange, ServiceEntry } from '../admission/directory.js';
export type { Permission, UpstreamConfig } from '../config/types.js';
export type { GateRequest, LocalInstanceHandle, OpenOptions } from '../gate/gate.js';
export type { CallContext } from '../gate/call-context.js';
export { parsedPayload, parsedValueOf } from '../gate/parsed-payload.js';
export type { LocalInstanceOptions, LocalReply, LocalWorker } from '../gate/local-instance.js';
export type { EngineHealth, InstanceLoad } from '../gate/instance.js';
export { fromServiceError, isRelayedUpstreamHeader } from '../grpc/api-error.js';
export { extParamsTooLarge } from '../grpc/client-message.js';
export { servedByHeader, type ServedBy, type ServiceAnswer, type ServiceCall } from '../gate/service-call.js';
export type { FallbackTarget } from '../gate/failover.js';
export { serviceHeaders, isGatewayHeader, type ServiceIdentity } from '../gate/service-headers.js';
export type * from '../../proto/src/index.js';
export { drained } from '../flow/drain-and-cancel.js';
export { AnswerCollector, answerBody, collectAnswer, isAllowedServiceHeader, type ServiceResponse } from '../gate/answer.js';
export { compileRequestSchema } from '../validation/request.js';
export {
  callerOf,
  serviceOf,
  PLATFORM_KEY_HEADER,
  type Admission,
  type AdmissionTarget,
  type AdmittedRequest,
  type CredentialResolver,
  type KeySource,
  type RequestSteps,
} from '../admission/http-middleware.js';
export type { ServiceRef } from '../admission/pipeline.js';
export {
  binaryMediaType,
  readPredict2RequestData,
  readPredictQuery,
  readPredictRequestData,
  utf8Text,
  type Predict2RequestData,
  type PredictQuery,
  type PredictRequestData,
} from '../validation/predict-bodies.js';
export type { Registry } from '../registry/registry.js';
export type { ConfigSchema, ConstantDefinition, Model, ModelParameters, Provider, VariableDefinition } from '../registry/types.js';
export type { DataCheck, DataTypes } from '../specs/data-types.js';
export {
  GateHeaders,
  FITTED_MODEL_DIR_HEADER,
  DERIVED_SERVICE_ID_HEADER,
  DERIVED_ACCOUNT_ID_HEADER,
  UpstreamErrorArgs,
} from '../../proto/src/index.js';
// Persistence building blocks for plugins that keep state of their own, in the task store's patterns
// (the connection itself comes from `ctx.storage.open`).
export { isDuplicateKeyError } from '../tasks/mongo-connection.js';
export { GridFsBlobStore } from '../tasks/gridfs-blob-store.js';
export { storePayload, loadPayload, deletePayload, type BlobStore, type StoredPayload } from '../tasks/payload-storage.js';
export { SpeechBridge } from '../speech/speech-bridge.js';
export { SpeechDataTypes } from '../../proto/src/index.js';
export { readWav, wavHeader, WavFormatError, type WavAudio } from '../speech/wav.js';
export type { SpeechLimits } from '../speech/limits.js';
export type { AudioChunkOut, SynthesisRequest, SynthesisStream } from '../speech/synthesis.js';
export type { RecognitionStream } from '../speech/recognition.js';
export { every, type EveryOptions } from '../flow/timers.js';
export { shareMetricsWithWorkers, workersMetrics, type WorkersMetrics } from '../observe/cluster-metrics.js';
export { parseJson } from '../validation/json.js';
export { SpendStore, groupSpend, SPEND_DIMENSIONS, type SpendRow, type SpendGroup, type SpendDimension } from '../userspace/spend.js';
export { BUDGETS_SCHEMA, MAX_KEYS_PER_ACCOUNT, type KeyDoc, type KeySettings } from '../userspace/index.js';
export {
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  normaliseEmail,
  sessionView,
  userView,
  type AccountChanges,
  type AccountView,
  type Budget,
  type MemberDoc,
  type MemberRole,
  type SessionDoc,
  type SessionView,
  type Source,
  type SyncedCollection,
  type SyncedKind,
  type UserDoc,
  type UserSpace,
  type UserView,
} from '../userspace/index.js';
export { hashesEqual } from '../admission/secret-hashes.js';
export type { AccountConfig } from '../config/types.js';
export { fallbackProblems, upstreamProblem } from '../config/service-config.js';
export { maskedUrl, publicDefinition, readServiceBody, type ServiceDefinition } from '../userspace/service-input.js';
export type { ServiceWrite, StoredServiceDoc } from '../userspace/services.js';
