import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { GATE_PROTO_PATH } from '../../proto/src/index.js';

/**
 * Every message, field number, oneof member and enum value of spec/streaming-protocol.md, transcribed
 * table by table. The proto must match it exactly: a typo in either fails here.
 * Format: field name → number; `oneof:<name>` lists the members of that oneof.
 */
const SPEC: Record<string, Record<string, number>> = {
  HeartBeatProto: { status: 1, interval: 2 },
  ServiceDescriptorProto: { name: 1, fittable: 10, methods: 20, schemaFiles: 30 },
  MethodDescriptorProto: { input: 1, output: 2, fitted: 3 },
  ParamDescriptorProto: { type: 1 },
  ServiceInfoProto: { accountId: 1, modelId: 2, modelName: 3, authToken: 4, bucketName: 5 },
  StartServingProto: { connectionToken: 1, serviceDescriptor: 3, hostname: 4, version: 5, image: 6, instanceBootUuid: 8 },
  StopServingProto: { reason: 1 },
  ClusterUpdateProto: { servers: 1, currentServer: 2 },
  StatusRequestProto: {},
  StatusResponseProto: { connectedGates: 1, connectedToAllGates: 2 },
  CancelRequestProto: { requestIdToCancel: 101 },
  ServiceToGateProto: {
    requestId: 1,
    headers: 1000,
    heartBeat: 2,
    startServing: 3,
    stopServing: 4,
    predict: 101,
    fit: 102,
    ext: 103,
    status: 105,
    batch: 106,
    partialPredict: 107,
    fitStatus: 108,
    deferredBillingCharge: 109,
    deferredBillingCharges: 110,
    error: 201,
  },
  GateToServiceProto: {
    requestId: 1,
    headers: 1000,
    heartBeat: 2,
    cluster: 3,
    serviceInfo: 4,
    stopServing: 5,
    predict: 101,
    fit: 102,
    ext: 103,
    status: 105,
    batch: 106,
    partialPredict: 107,
    cancel: 108,
    error: 201,
  },
  PayloadProto: { dataType: 1, json: 101, protobuf: 102 },
  PredictRequestProto: { data: 101, config: 102 },
  PartialPredictRequestProto: { data: 101, config: 102, start: 103, finish: 104 },
  BatchRequestProto: { data: 101, config: 102 },
  BatchPayloadProto: { requestId: 1, data: 101, headers: 102, statusCode: 103 },
  PredictResponseProto: { data: 101, headers: 102, statusCode: 103 },
  PartialPredictResponseProto: { data: 101, start: 103, finish: 104, headers: 105, statusCode: 106 },
  BatchResponseProto: { data: 101 },
  BatchPayloadResponseProto: { requestId: 1, headers: 1000, predict: 101, error: 201 },
  ExtendedRequestProto: { methodName: 1, params: 2 },
  ExtendedResponseProto: { data: 1, headers: 102, statusCode: 103 },
  FitRequestProto: {
    trainData: 101,
    targetsData: 102,
    config: 103,
    modelDir: 104,
    previousModelDir: 105,
    targetServiceInfo: 106,
    datasetInfo: 107,
  },
  FitResponseProto: {},
  FitStatusProto: { percentage: 101 },
  DatasetInfoProto: { accountId: 1, datasetId: 2, name: 3, type: 4 },
  DeferredBillingChargeRequestProto: { billingRequestId: 1, amountInUnits: 2 },
  DeferredBillingChargesProto: { charges: 1, params: 2 },
  DeferredBillingChargeProto: { idempotencyKey: 1, amount: 2, currency: 3, llmModelName: 4, billingDetails: 5 },
  DeferredBillingParamsProto: { callerAccountId: 1, apiKeyName: 2, billingKeyName: 3, billingAccountId: 4, billingUserId: 5 },
  SimpleTextProto: { text: 1 },
  ClientRequestProto: { account: 1, model: 2, authToken: 3, timeoutSec: 4, headers: 1000, predict: 101, ext: 103, partialPredict: 104 },
  ClientResponseProto: { headers: 1000, predict: 101, ext: 103, partialPredict: 104, error: 201 },
  ClientTokenRequestProto: {},
  ClientTokenResponseProto: { token: 1 },
  ClientTtsRequestProto: { account: 1, model: 2, authToken: 3, tts: 101 },
  TtsRequestProto: { text: 1, voice: 2, output_audio_spec: 3 },
  AudioFormatOptions: { audio_encoding: 1, sample_rate_hertz: 2, chunk_size_kb: 3 },
  ClientTtsResponseProto: { tts: 101, error: 201 },
  TtsResponseProto: { audio_chunk: 1, first: 10, last: 12 },
  AudioChunk: { data: 1 },
  ClientAsrRequestProto: { account: 1, model: 2, authToken: 3, asr: 101 },
  AsrRequestProto: { config: 1, audio_content: 2 },
  ClientAsrResponseProto: { asr: 101, error: 201 },
  AsrResponseProto: { chunks: 1, final: 2, provider_specific: 3 },
  SpeechRecognitionChunk: { alternatives: 1, final: 2, end_of_utterance: 3 },
  SpeechRecognitionAlternative: { text: 1, confidence: 2, words: 3 },
  WordInfo: { start_time: 1, end_time: 2, word: 3, confidence: 4 },
  RecognitionConfig: {
    audio_encoding: 1,
    sample_rate_hertz: 2,
    language_code: 3,
    enable_profanity_filter: 4,
    model: 5,
    enable_partial_results: 7,
    enable_single_utterance: 8,
    audio_channel_count: 9,
    enable_raw_results: 10,
    enable_literature_text: 11,
    enable_automatic_punctuation: 12,
    provider_specific: 13,
  },
  ApiErrorProto: { code: 1, message: 2, status: 3, args: 4, statusCode: 5 },
};

/** Members of each real (non-synthetic) oneof, from the spec's "one of" columns. */
const ONEOFS: Record<string, string[]> = {
  ServiceToGateProto: [
    'heartBeat',
    'startServing',
    'stopServing',
    'predict',
    'fit',
    'ext',
    'status',
    'batch',
    'partialPredict',
    'fitStatus',
    'deferredBillingCharge',
    'deferredBillingCharges',
    'error',
  ],
  GateToServiceProto: [
    'heartBeat',
    'cluster',
    'serviceInfo',
    'stopServing',
    'predict',
    'fit',
    'ext',
    'status',
    'batch',
    'partialPredict',
    'cancel',
    'error',
  ],
  PayloadProto: ['json', 'protobuf'],
  BatchPayloadResponseProto: ['predict', 'error'],
  ClientRequestProto: ['predict', 'ext', 'partialPredict'],
  ClientResponseProto: ['predict', 'ext', 'partialPredict', 'error'],
  ClientTtsResponseProto: ['tts', 'error'],
  AsrRequestProto: ['config', 'audio_content'],
  ClientAsrResponseProto: ['asr', 'error'],
};

/** Scalars the spec marks "optional" (presence tracked in proto3). */
const OPTIONAL: Record<string, string[]> = {
  MethodDescriptorProto: ['fitted'],
  ServiceInfoProto: ['bucketName'],
  StartServingProto: ['hostname', 'version', 'image', 'instanceBootUuid'],
  StopServingProto: ['reason'],
  PayloadProto: ['dataType'],
  PartialPredictRequestProto: ['start', 'finish'],
  BatchPayloadProto: ['statusCode'],
  PredictResponseProto: ['statusCode'],
  PartialPredictResponseProto: ['start', 'finish', 'statusCode'],
  ExtendedResponseProto: ['statusCode'],
  FitRequestProto: ['previousModelDir'],
  DeferredBillingChargeProto: ['currency', 'llmModelName', 'billingDetails'],
  DeferredBillingParamsProto: ['callerAccountId', 'apiKeyName', 'billingKeyName', 'billingAccountId', 'billingUserId'],
  TtsRequestProto: ['voice'],
  AudioFormatOptions: ['audio_encoding', 'sample_rate_hertz', 'chunk_size_kb'],
  TtsResponseProto: ['first', 'last'],
  AsrResponseProto: ['final'],
  ApiErrorProto: ['status', 'statusCode'],
};

const SIMPLE_STATUS: Record<string, number> = {
  OK: 0,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  PROXY_AUTHENTICATION_REQUIRED: 407,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  GONE: 410,
  LENGTH_REQUIRED: 411,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  EXPECTATION_FAILED: 417,
  IM_A_TEAPOT: 418,
  MISDIRECTED_REQUEST: 421,
  UNPROCESSABLE_ENTITY: 422,
  LOCKED: 423,
  FAILED_DEPENDENCY: 424,
  TOO_EARLY: 425,
  UPGRADE_REQUIRED: 426,
  PRECONDITION_REQUIRED: 428,
  TOO_MANY_REQUESTS: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  UNAVAILABLE_FOR_LEGAL_REASONS: 451,
  NO_RESPONSE: 444,
  REQUEST_HEADER_TOO_LARGE: 494,
  SSL_CERTIFICATE_ERROR: 495,
  SSL_CERTIFICATE_REQUIRED: 496,
  HTTP_REQUEST_SENT_TO_HTTPS_PORT: 497,
  CLIENT_CLOSED_REQUEST: 499,
  INTERNAL_SERVER_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
  HTTP_VERSION_NOT_SUPPORTED: 505,
  VARIANT_ALSO_NEGOTIATES: 506,
  INSUFFICIENT_STORAGE: 507,
  LOOP_DETECTED: 508,
  NOT_EXTENDED: 510,
  NETWORK_AUTHENTICATION_REQUIRED: 511,
  WEB_SERVER_RETURNED_UNKNOWN_ERROR: 520,
  WEB_SERVER_IS_DOWN: 521,
  CONNECTION_TIMED_OUT: 522,
  ORIGIN_IS_UNREACHABLE: 523,
  A_TIMEOUT_OCCURRED: 524,
  SSL_HANDSHAKE_FAILED: 525,
  INVALID_SSL_CERTIFICATE: 526,
  RAILGUN_ERROR: 527,
  SITE_IS_OVERLOADED: 529,
  SITE_IS_FROZEN: 530,
  ORIGIN_CONNECTION_TIME_OUT: 561,
};

const root = new protobuf.Root().loadSync(GATE_PROTO_PATH, { keepCase: true });
const pkg = root.lookup('com.platform.gate') as protobuf.Namespace;
const type = (name: string) => pkg.lookupType(name);

describe('proto/gate.proto against the spec tables', () => {
  it('declares package com.platform.gate with every message of the spec and no other', () => {
    const declared = (pkg.nestedArray.filter((n) => n instanceof protobuf.Type) as protobuf.Type[]).map((t) => t.name).sort();
    expect(declared).toEqual(Object.keys(SPEC).sort());
  });

  it.each(Object.entries(SPEC))('%s has exactly the spec field numbers', (name, fields) => {
    const actual = Object.fromEntries(type(name).fieldsArray.map((f) => [f.name, f.id]));
    expect(actual).toEqual(fields);
  });

  it.each(Object.entries(ONEOFS))('%s oneof members', (name, members) => {
    const oneofs = type(name).oneofsArray.filter((o) => !o.name.startsWith('_'));
    expect(oneofs).toHaveLength(1);
    expect(oneofs[0]!.oneof.slice().sort()).toEqual(members.slice().sort());
  });

  it.each(Object.entries(OPTIONAL))('%s optional scalars track presence', (name, fields) => {
    for (const field of fields)
      expect(type(name).fields[field]!.options?.proto3_optional ?? type(name).fields[field]!.partOf?.name).toBeTruthy();
  });

  it('reserves field 7 of StartServingProto', () => {
    // protobufjs keeps `reserved 7;` as the inclusive range [7, 7].
    expect(type('StartServingProto').reserved).toEqual([[7, 7]]);
  });

  it('maps are map<string,string> except the descriptor maps and ext params; WordInfo times are google.protobuf.Duration', () => {
    const maps = Object.keys(SPEC).flatMap((n) =>
      type(n)
        .fieldsArray.filter((f) => f instanceof protobuf.MapField)
        .map((f) => [n, f] as const),
    );
    for (const [owner, f] of maps) {
      const map = f as protobuf.MapField;
      expect(map.keyType, `${owner}.${map.name}`).toBe('string');
      const expected =
        owner === 'ServiceDescriptorProto' && map.name === 'methods'
          ? 'MethodDescriptorProto'
          : owner === 'MethodDescriptorProto'
            ? 'ParamDescriptorProto'
            : // The public SDKs declare ext parameters as payloads; a string map breaks their decoding.
              owner === 'ExtendedRequestProto' && map.name === 'params'
              ? 'PayloadProto'
              : 'string';
      expect(map.type, `${owner}.${map.name}`).toBe(expected);
    }
    expect(type('WordInfo').fields.start_time!.type).toBe('google.protobuf.Duration');
    expect(type('WordInfo').fields.end_time!.type).toBe('google.protobuf.Duration');
  });

  it('SimpleStatusProto has every value of the spec', () => {
    expect(pkg.lookupEnum('SimpleStatusProto').values).toEqual(SIMPLE_STATUS);
  });

  it('the audio encodings are the spec values', () => {
    expect(type('AudioFormatOptions').lookupEnum('AudioEncoding').values).toEqual({ LINEAR16_PCM: 0 });
    expect(type('RecognitionConfig').lookupEnum('AudioEncoding').values).toEqual({
      AUDIO_ENCODING_UNSPECIFIED: 0,
      LINEAR16_PCM: 1,
      OGG_OPUS: 2,
      MP3: 3,
      MULAW: 4,
      ALAW: 5,
      FLAC: 6,
    });
  });

  it('service Gate has the seven calls with the spec request/response types and streaming', () => {
    const gate = pkg.lookupService('Gate');
    const calls = Object.fromEntries(
      gate.methodsArray.map((m) => [m.name, [m.requestType, !!m.requestStream, m.responseType, !!m.responseStream]]),
    );
    expect(calls).toEqual({
      healthCheck: ['HeartBeatProto', false, 'HeartBeatProto', false],
      processAsync: ['ServiceToGateProto', true, 'GateToServiceProto', true],
      process: ['ClientRequestProto', false, 'ClientResponseProto', false],
      processResponseStream: ['ClientRequestProto', false, 'ClientResponseProto', true],
      processStream: ['ClientRequestProto', true, 'ClientResponseProto', true],
      processSynthesis: ['ClientTtsRequestProto', false, 'ClientTtsResponseProto', true],
      processRecognition: ['ClientAsrRequestProto', true, 'ClientAsrResponseProto', true],
    });
  });
});
