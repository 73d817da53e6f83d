// The TypeScript model-service SDK and a small typed client of the Gate protocol.

export { ModelService, serveModel, type ModelServiceEvents } from './service/model-service.js';
export { ConfigurationError, type ModelServiceOptions, type ServiceDescriptor } from './service/options.js';
export { GateConnectionError } from './service/connection.js';
export { RequestContext, FitContext } from './service/context.js';
export { traceContextOf, type TraceContext } from './service/trace-context.js';
// The protocol's header names a service reads or sets.
export {
  GateHeaders,
  REQUEST_ID_HEADER,
  SERVER_TIME_HEADER,
  FITTED_MODEL_DIR_HEADER,
  DERIVED_SERVICE_ID_HEADER,
  DERIVED_ACCOUNT_ID_HEADER,
  UpstreamErrorArgs,
} from '@model-gateway/protocol';
export { ServiceError, ServiceErrorCodes, RequestCancelledError, toApiErrorProto } from './service/errors.js';
export { StreamClosedError } from './service/session.js';
export type {
  BatchItem,
  BatchResult,
  FitRequest,
  ModelHandlers,
  ModelOutput,
  ModelResponse,
  PartialPredictChunk,
  PredictRequest,
  PredictResult,
} from './service/handlers.js';
export type { BackoffOptions } from './service/backoff.js';
export { consoleLogger, silentLogger, type SdkLogger } from './service/logger.js';
export { PROCESS_INSTANCE_UUID } from './service/instance.js';
export type { LoadReport } from '@model-gateway/protocol';
export { Payload, PayloadError, isPayloadProto, jsonPayload, payloadKind, protobufPayload, rawJsonPayload, readJson } from './payload.js';
export {
  GateClient,
  GateDuplexStream,
  createGateClient,
  responsePayload,
  type CallOptions,
  type ClientRequestBody,
  type GateClientOptions,
  type JsonPredictOptions,
} from './client/gate-client.js';
export { GateClientError } from './client/errors.js';
export { GateRecognitionStream } from './client/speech-calls.js';
export {
  LinearResampler,
  SpeechDataTypes,
  asrResponsePayload,
  audioPayload,
  readRecognitionConfig,
  readTtsRequest,
  decodeAsrResponse,
  decodeRecognitionConfig,
  decodeTtsRequest,
  encodeAsrResponse,
  encodeRecognitionConfig,
  encodeTtsRequest,
} from './speech.js';
