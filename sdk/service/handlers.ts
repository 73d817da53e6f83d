import type { DatasetInfoProto, LoadReport, PayloadProto, ServiceInfoProto, StatusResponseProto, StringMap } from '@model-gateway/protocol';
import type { Payload } from '../payload.js';
import type { FitContext, RequestContext } from './context.js';

/** A full answer: payload plus optional response headers and status code. */
export interface ModelResponse {
  data: PayloadProto;
  headers?: StringMap;
  statusCode?: number;
}

/**
 * What a handler may return for one answer: a ModelResponse, a PayloadProto (from jsonPayload() or
 * protobufPayload()), an incoming Payload (echo), or any other value, which is sent JSON-encoded.
 */
export type ModelOutput = ModelResponse | PayloadProto | Payload | object | string | number | boolean | null;

/** A single answer, or an async iterable of partial answers streamed as `partialPredict` frames. */
export type PredictResult = ModelOutput | AsyncIterable<ModelOutput>;

export interface PredictRequest {
  data: Payload;
  config: Payload | undefined;
}

/** One incoming `partialPredict` message of a streamed request. */
export interface PartialPredictChunk {
  data: Payload;
  config: Payload | undefined;
  start: boolean;
  finish: boolean;
}

export interface BatchItem {
  /** The item's own requestId; its answer carries it. */
  requestId: number;
  data: Payload;
  headers: StringMap;
}

/** One result per batch item, in the items' order: an answer, or an Error for that item alone. */
export type BatchResult = ModelOutput | Error;

export interface FitRequest {
  trainData: Payload;
  targetsData: Payload | undefined;
  config: Payload | undefined;
  modelDir: string;
  previousModelDir: string | undefined;
  targetServiceInfo: ServiceInfoProto | undefined;
  datasetInfo: DatasetInfoProto | undefined;
}

type MaybePromise<T> = T | Promise<T>;

/** The model's handlers; all optional. A request without a handler is answered `method-not-supported`. */
export interface ModelHandlers {
  predict?(request: PredictRequest, ctx: RequestContext): MaybePromise<PredictResult>;
  /** Messages of one requestId, as an async iterable that ends on `finish`. */
  partialPredict?(input: AsyncIterable<PartialPredictChunk>, ctx: RequestContext): MaybePromise<PredictResult>;
  /**
   * Each parameter is the caller's text, as sent (over HTTP `{"params": {"a": "1"}}`, over gRPC
   * `params: {a: {json: "1"}}`); what it returns is what the caller gets back.
   */
  ext?(methodName: string, params: Record<string, string>, ctx: RequestContext): MaybePromise<ModelOutput>;
  /** Without a batch handler, batch items go through `predict` one by one. */
  batch?(items: BatchItem[], config: Payload | undefined, ctx: RequestContext): MaybePromise<BatchResult[]>;
  fit?(request: FitRequest, ctx: FitContext): MaybePromise<void>;
  status?(ctx: RequestContext): MaybePromise<StatusResponseProto>;
  /**
   * The instance's load, sent with every heartBeat so that the gateway routes to the least loaded
   * instance that has the model loaded (docs/routing.md, "Load reports"). Called once per heartbeat.
   */
  load?(): LoadReport | undefined;
}
