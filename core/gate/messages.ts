/**
 * TypeScript shapes of the Gate messages as @grpc/proto-loader decodes them with PROTO_LOADER_OPTS
 * (keepCase, longs as Number, oneofs named by `body`). On the way out every field is optional; the
 * decoder leaves absent scalars undefined. Kept by hand (no generated files in the repo) and checked
 * against proto/gate.proto by test/gate/messages.test.ts.
 */

export type StringMap = Record<string, string>;

export interface PayloadProto {
  dataType?: string;
  json?: string;
  protobuf?: Buffer;
  body?: 'json' | 'protobuf';
}

export interface HeartBeatProto {
  status?: string;
  interval?: number;
}

export interface ParamDescriptorProto {
  type?: string;
}

export interface MethodDescriptorProto {
  input?: Record<string, ParamDescriptorProto>;
  output?: ParamDescriptorProto;
  fitted?: boolean;
}

export interface ServiceDescriptorProto {
  name?: string;
  fittable?: boolean;
  methods?: Record<string, MethodDescriptorProto>;
  schemaFiles?: StringMap;
}

export interface ServiceInfoProto {
  accountId?: number;
  modelId?: number;
  modelName?: string;
  authToken?: string;
  bucketName?: string;
}

export interface StartServingProto {
  connectionToken?: string;
  serviceDescriptor?: ServiceDescriptorProto;
  hostname?: string;
  version?: number;
  image?: string;
  instanceBootUuid?: string;
}

export interface StopServingProto {
  reason?: string;
}

export interface ClusterUpdateProto {
  servers?: string[];
  currentServer?: string;
}

export interface StatusResponseProto {
  connectedGates?: string[];
  connectedToAllGates?: boolean;
}

export interface ApiErrorProto {
  code?: string;
  message?: string;
  status?: string;
  args?: StringMap;
  statusCode?: number;
}

export interface PredictRequestProto {
  data?: PayloadProto;
  config?: PayloadProto;
}

export interface PartialPredictRequestProto {
  data?: PayloadProto;
  config?: PayloadProto;
  start?: boolean;
  finish?: boolean;
}

export interface BatchPayloadProto {
  requestId?: number;
  data?: PayloadProto;
  headers?: StringMap;
  statusCode?: number;
}

export interface BatchRequestProto {
  data?: BatchPayloadProto[];
  config?: PayloadProto;
}

export interface PredictResponseProto {
  data?: PayloadProto;
  headers?: StringMap;
  statusCode?: number;
}

export interface PartialPredictResponseProto {
  data?: PayloadProto;
  start?: boolean;
  finish?: boolean;
  headers?: StringMap;
  statusCode?: number;
}

export interface BatchPayloadResponseProto {
  requestId?: number;
  headers?: StringMap;
  predict?: PredictResponseProto;
  error?: ApiErrorProto;
  body?: 'predict' | 'error';
}

export interface BatchResponseProto {
  data?: BatchPayloadResponseProto[];
}

export interface ExtendedRequestProto {
  methodName?: string;
  /** Each parameter is a payload, as in the platform's public SDKs; over HTTP one becomes `{json: <text>}`. */
  params?: Record<string, PayloadProto>;
}

export interface ExtendedResponseProto {
  data?: PayloadProto;
  headers?: StringMap;
  statusCode?: number;
}

export interface DatasetInfoProto {
  accountId?: number;
  datasetId?: number;
  name?: string;
  type?: string;
}

export interface FitRequestProto {
  trainData?: PayloadProto;
  targetsData?: PayloadProto;
  config?: PayloadProto;
  modelDir?: string;
  previousModelDir?: string;
  targetServiceInfo?: ServiceInfoProto;
  datasetInfo?: DatasetInfoProto;
}

export type FitResponseProto = Record<string, never>;

export interface FitStatusProto {
  percentage?: number;
}

export interface CancelRequestProto {
  requestIdToCancel?: number;
}

export interface DeferredBillingChargeRequestProto {
  billingRequestId?: string;
  amountInUnits?: number;
}

export interface DeferredBillingChargeProto {
  idempotencyKey?: string;
  amount?: number;
  currency?: string;
  llmModelName?: string;
  billingDetails?: string;
}

export interface DeferredBillingParamsProto {
  callerAccountId?: number;
  apiKeyName?: string;
  billingKeyName?: string;
  billingAccountId?: number;
  billingUserId?: string;
}

export interface DeferredBillingChargesProto {
  charges?: DeferredBillingChargeProto[];
  params?: DeferredBillingParamsProto;
}

/** Members of the `body` oneof of ServiceToGateProto. */
export interface ServiceToGateBodies {
  heartBeat: HeartBeatProto;
  startServing: StartServingProto;
  stopServing: StopServingProto;
  predict: PredictResponseProto;
  fit: FitResponseProto;
  ext: ExtendedResponseProto;
  status: StatusResponseProto;
  batch: BatchResponseProto;
  partialPredict: PartialPredictResponseProto;
  fitStatus: FitStatusProto;
  deferredBillingCharge: DeferredBillingChargeRequestProto;
  deferredBillingCharges: DeferredBillingChargesProto;
  error: ApiErrorProto;
}

export type ServiceToGateProto = {
  requestId?: number;
  headers?: StringMap;
  body?: keyof ServiceToGateBodies;
} & Partial<ServiceToGateBodies>;

/** Members of the `body` oneof of GateToServiceProto. */
export interface GateToServiceBodies {
  heartBeat: HeartBeatProto;
  cluster: ClusterUpdateProto;
  serviceInfo: ServiceInfoProto;
  stopServing: StopServingProto;
  predict: PredictRequestProto;
  fit: FitRequestProto;
  ext: ExtendedRequestProto;
  status: Record<string, never>;
  batch: BatchRequestProto;
  partialPredict: PartialPredictRequestProto;
  cancel: CancelRequestProto;
  error: ApiErrorProto;
}

export type GateToServiceProto = {
  requestId?: number;
  headers?: StringMap;
  body?: keyof GateToServiceBodies;
} & Partial<GateToServiceBodies>;

export interface ClientRequestProto {
  account?: string;
  model?: string;
  authToken?: string;
  timeoutSec?: number;
  headers?: StringMap;
  predict?: PredictRequestProto;
  ext?: ExtendedRequestProto;
  partialPredict?: PartialPredictRequestProto;
  body?: 'predict' | 'ext' | 'partialPredict';
}

export interface ClientResponseProto {
  headers?: StringMap;
  predict?: PredictResponseProto;
  ext?: ExtendedResponseProto;
  partialPredict?: PartialPredictResponseProto;
  error?: ApiErrorProto;
  body?: 'predict' | 'ext' | 'partialPredict' | 'error';
}

export interface AudioFormatOptions {
  audio_encoding?: 'LINEAR16_PCM';
  sample_rate_hertz?: number;
  chunk_size_kb?: number;
}

export interface TtsRequestProto {
  text?: string;
  voice?: string;
  output_audio_spec?: AudioFormatOptions;
}

export interface ClientTtsRequestProto {
  account?: string;
  model?: string;
  authToken?: string;
  tts?: TtsRequestProto;
}

export interface TtsResponseProto {
  audio_chunk?: { data?: Buffer };
  first?: boolean;
  last?: boolean;
}

export interface ClientTtsResponseProto {
  tts?: TtsResponseProto;
  error?: ApiErrorProto;
  body?: 'tts' | 'error';
}

export type RecognitionAudioEncoding =
  | 'AUDIO_ENCODING_UNSPECIFIED'
  | 'LINEAR16_PCM'
  | 'OGG_OPUS'
  | 'MP3'
  | 'MULAW'
  | 'ALAW'
  | 'FLAC';

export interface RecognitionConfig {
  audio_encoding?: RecognitionAudioEncoding;
  sample_rate_hertz?: number;
  language_code?: string;
  enable_profanity_filter?: boolean;
  model?: string;
  enable_partial_results?: boolean;
  enable_single_utterance?: boolean;
  audio_channel_count?: number;
  enable_raw_results?: boolean;
  enable_literature_text?: boolean;
  enable_automatic_punctuation?: boolean;
  provider_specific?: string;
}

export interface AsrRequestProto {
  config?: RecognitionConfig;
  audio_content?: Buffer;
  body?: 'config' | 'audio_content';
}

export interface ClientAsrRequestProto {
  account?: string;
  model?: string;
  authToken?: string;
  asr?: AsrRequestProto;
}

export interface DurationProto {
  seconds?: number;
  nanos?: number;
}

export interface WordInfo {
  start_time?: DurationProto;
  end_time?: DurationProto;
  word?: string;
  confidence?: number;
}

export interface SpeechRecognitionAlternative {
  text?: string;
  confidence?: number;
  words?: WordInfo[];
}

export interface SpeechRecognitionChunk {
  alternatives?: SpeechRecognitionAlternative[];
  final?: boolean;
  end_of_utterance?: boolean;
}

export interface AsrResponseProto {
  chunks?: SpeechRecognitionChunk[];
  final?: boolean;
  provider_specific?: string;
}

export interface ClientAsrResponseProto {
  asr?: AsrResponseProto;
  error?: ApiErrorProto;
  body?: 'asr' | 'error';
}
