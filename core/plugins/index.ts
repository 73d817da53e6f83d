/** The public surface for plugins: everything a plugin may import from core. */
export { definePlugin, type PluginContext, type PluginDefinition } from './define-plugin.js';
export { gatewayError, GatewayError, renderErrorBody, toGatewayError, type ErrorBody, type ErrorCode } from '../errors.js';
export { startTaskReaper } from '../tasks/create-task-store.js';
export {
  gatewayErrorFromTask, taskErrorFrom,
  type StoredResult, type TaskRecord, type TaskRequestInfo, type TaskRequestInput, type TaskResult, type TaskStore,
} from '../tasks/task-store.js';
export type { Caller, ServiceEntry } from '../directory.js';
export type { Permission } from '../config/types.js';
export type { GateRequest, OpenOptions } from '../gate/gate.js';
export { fromServiceError } from '../gate/api-error.js';
export type { ServiceAnswer, ServiceCall } from '../gate/service-call.js';
export type * from '../../proto/src/index.js';
export { compileRequestSchema } from '../validation/request.js';
export {
  binaryMediaType, parseJsonText, readPredict2RequestData, readPredictQuery, readPredictRequestData,
  type Predict2RequestData, type PredictQuery, type PredictRequestData,
} from '../validation/predict-bodies.js';
export type { Registry } from '../registry/registry.js';
export type { ConfigSchema, ConstantDefinition, Model, ModelParameters, Provider, VariableDefinition } from '../registry/types.js';
export type { DataCheck, DataTypes } from '../specs/data-types.js';
export { GateHeaders, FITTED_MODEL_DIR_HEADER, DERIVED_SERVICE_ID_HEADER, DERIVED_ACCOUNT_ID_HEADER } from '../../proto/src/index.js';
// Persistence building blocks for plugins that keep state of their own, in the task store's patterns.
export { openMongoConnection, isDuplicateKeyError } from '../tasks/mongo-connection.js';
export { GridFsBlobStore } from '../tasks/gridfs-blob-store.js';
export { storePayload, loadPayload, deletePayload, type BlobStore, type StoredPayload } from '../tasks/payload-storage.js';
export { SpeechBridge } from '../speech/speech-bridge.js';
export { SpeechDataTypes } from '../../proto/src/index.js';
export { readWav, wavHeader, WavFormatError, type WavAudio } from '../speech/wav.js';
export type { SpeechLimits } from '../speech/limits.js';
export type { AudioChunkOut, SynthesisRequest, SynthesisStream } from '../speech/synthesis.js';
export type { RecognitionStream } from '../speech/recognition.js';
