import * as grpc from '@grpc/grpc-js';
import type {
  ClientRequestProto,
  ClientResponseProto,
  ExtendedRequestProto,
  ExtendedResponseProto,
  PartialPredictRequestProto,
  PayloadProto,
  PredictRequestProto,
  RecognitionConfig,
  StringMap,
  TtsRequestProto,
  TtsResponseProto,
} from '@model-gateway/protocol';
import { createGateStub, type GateStub } from '../grpc.js';
import { PayloadError, jsonPayload, readJson } from '../payload.js';
import { GateClientError } from './errors.js';
import { GateRecognitionStream, readSynthesis, type SpeechAddress } from './speech-calls.js';

export interface GateClientOptions {
  /** The gateway's gRPC address, `host:port`. */
  address: string;
  /** The caller's API key, sent as `authToken` in every request. Default: env PLATFORM_CLIENT_TOKEN. */
  authToken?: string;
  /** Defaults for every call. */
  account?: string;
  model?: string;
  timeoutSec?: number;
  /** Default: insecure. */
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

export interface CallOptions {
  /** Account ID (digits) or name. */
  account?: string;
  /** Model ID (digits) or name. */
  model?: string;
  /** Server-side timeout; the gRPC deadline is this plus deadlineGraceMs so that the gateway's own error arrives. */
  timeoutSec?: number;
  headers?: StringMap;
  authToken?: string;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** An explicit gRPC deadline in ms from now (overrides the one derived from timeoutSec). */
  deadlineMs?: number;
  /** Added to timeoutSec for the gRPC deadline (default 5000 ms). */
  deadlineGraceMs?: number;
}

export type ClientRequestBody =
  { predict: PredictRequestProto } | { ext: ExtendedRequestProto } | { partialPredict: PartialPredictRequestProto };

export interface JsonPredictOptions extends CallOptions {
  /** Sent JSON-encoded as PredictRequestProto.config. */
  config?: unknown;
  dataType?: string;
}

/** The payload of a predict, ext or partialPredict answer. */
export function responsePayload(response: ClientResponseProto): PayloadProto | undefined {
  return response.predict?.data ?? response.partialPredict?.data ?? response.ext?.data;
}

function checked(response: ClientResponseProto): ClientResponseProto {
  if (response.body === 'error' || (response.body === undefined && response.error)) throw GateClientError.fromApiError(response.error);
  return response;
}

function jsonOf<T>(payload: PayloadProto | undefined): T {
  try {
    return readJson<T>(payload, 'answer');
  } catch (err) {
    if (err instanceof PayloadError) throw new GateClientError('wrong-response', err.message, 502);
    throw err;
  }
}

function predictBody(data: unknown, options: JsonPredictOptions): ClientRequestBody {
  const predict: PredictRequestProto = { data: jsonPayload(data, options.dataType) };
  if (options.config !== undefined) predict.config = jsonPayload(options.config);
  return { predict };
}

/** A typed client of the Gate's client calls: process, processResponseStream and processStream. */
export class GateClient {
  private readonly stub: GateStub;

  constructor(private readonly options: GateClientOptions) {
    this.stub = createGateStub(options.address, options.credentials, options.channelOptions);
  }

  /** One request, one answer. An in-band error rejects with GateClientError. */
  process(body: ClientRequestBody, options: CallOptions = {}): Promise<ClientResponseProto> {
    return new Promise((resolve, reject) => {
      const call = this.stub.process(this.request(body, options), this.metadata(), this.callOptions(options), (err, response) => {
        options.signal?.removeEventListener('abort', onAbort);
        if (err) reject(GateClientError.from(err));
        else {
          try {
            resolve(checked(response ?? {}));
          } catch (e) {
            reject(e);
          }
        }
      });
      const onAbort = (): void => call.cancel();
      if (options.signal?.aborted) call.cancel();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** One request, a stream of answers (one predict, or partialPredict frames). An error frame throws GateClientError. */
  async *processResponseStream(body: ClientRequestBody, options: CallOptions = {}): AsyncGenerator<ClientResponseProto, void, undefined> {
    const call = this.stub.processResponseStream(this.request(body, options), this.metadata(), this.callOptions(options));
    yield* readResponses(call, options.signal, () => call.cancel());
  }

  /** A duplex stream: write requests (each carries account, model, authToken, timeoutSec and headers), read answers. */
  processStream(options: CallOptions = {}): GateDuplexStream {
    const call = this.stub.processStream(this.metadata(), this.callOptions(options));
    return new GateDuplexStream(call, (body) => this.request(body, options), options.signal);
  }

  /** predict with a JSON body; resolves with the answer's JSON value. */
  async predictJson<T = unknown>(data: unknown, options: JsonPredictOptions = {}): Promise<T> {
    const response = await this.process(predictBody(data, options), options);
    return jsonOf<T>(responsePayload(response));
  }

  /** predict with a JSON body over processResponseStream; yields the JSON value of every answer frame that has data. */
  async *predictJsonStream<T = unknown>(data: unknown, options: JsonPredictOptions = {}): AsyncGenerator<T, void, undefined> {
    for await (const response of this.processResponseStream(predictBody(data, options), options)) {
      const payload = responsePayload(response);
      if (payload && (payload.json !== undefined || payload.protobuf !== undefined)) yield jsonOf<T>(payload);
    }
  }

  /**
   * An extended method call. Parameters are text: each is sent as `{json: <text>}`, as the HTTP ext route
   * does, and the service's handler gets the text back; the answer is the service's, as it sent it.
   */
  async ext(methodName: string, params: Record<string, string> = {}, options: CallOptions = {}): Promise<ExtendedResponseProto> {
    const payloads = Object.fromEntries(Object.entries(params).map(([name, text]) => [name, { json: text }]));
    const response = await this.process({ ext: { methodName, params: payloads } }, options);
    if (!response.ext) throw new GateClientError('wrong-response', `Expected an ext answer, got ${response.body ?? 'nothing'}`, 502);
    return response.ext;
  }

  /**
   * processSynthesis: the audio of `tts` in chunks of `output_audio_spec.chunk_size_kb`, `first` on the
   * first and `last` on the last, as the service produces it. An error frame throws GateClientError.
   */
  synthesize(tts: TtsRequestProto, options: CallOptions = {}): AsyncGenerator<TtsResponseProto, void, undefined> {
    const call = this.stub.processSynthesis({ ...this.speechAddress(options), tts }, this.metadata(), this.speechCallOptions(options));
    return readSynthesis(call, options.signal);
  }

  /** processRecognition: sends `config` first; then write audio, `end()`, and iterate the results. */
  recognize(config: RecognitionConfig, options: CallOptions = {}): GateRecognitionStream {
    const call = this.stub.processRecognition(this.metadata(), this.speechCallOptions(options));
    return new GateRecognitionStream(call, this.speechAddress(options), config, options.signal);
  }

  close(): void {
    this.stub.close();
  }

  private speechAddress(options: CallOptions): SpeechAddress {
    const { account = '', model = '', authToken = '' } = this.request({ ext: {} }, options);
    return { account, model, authToken };
  }

  /** Speech calls have no timeoutSec; only an explicit deadlineMs bounds them. */
  private speechCallOptions(options: CallOptions): grpc.CallOptions {
    return options.deadlineMs !== undefined ? { deadline: Date.now() + options.deadlineMs } : {};
  }

  private request(body: ClientRequestBody, options: CallOptions): ClientRequestProto {
    const request: ClientRequestProto = {
      account: options.account ?? this.options.account ?? '',
      model: options.model ?? this.options.model ?? '',
      authToken: options.authToken ?? this.options.authToken ?? process.env.PLATFORM_CLIENT_TOKEN ?? '',
      ...body,
    };
    const timeoutSec = options.timeoutSec ?? this.options.timeoutSec;
    if (timeoutSec !== undefined) request.timeoutSec = Math.ceil(timeoutSec);
    if (options.headers) request.headers = { ...options.headers };
    return request;
  }

  private metadata(): grpc.Metadata {
    return new grpc.Metadata();
  }

  private callOptions(options: CallOptions): grpc.CallOptions {
    const timeoutSec = options.timeoutSec ?? this.options.timeoutSec;
    if (options.deadlineMs !== undefined) return { deadline: Date.now() + options.deadlineMs };
    if (timeoutSec !== undefined && timeoutSec > 0) {
      return { deadline: Date.now() + timeoutSec * 1000 + (options.deadlineGraceMs ?? 5000) };
    }
    return {};
  }
}

async function* readResponses(
  call: grpc.ClientReadableStream<ClientResponseProto> | grpc.ClientDuplexStream<ClientRequestProto, ClientResponseProto>,
  signal: AbortSignal | undefined,
  cancel: () => void,
): AsyncGenerator<ClientResponseProto, void, undefined> {
  const onAbort = (): void => cancel();
  if (signal?.aborted) cancel();
  else signal?.addEventListener('abort', onAbort, { once: true });
  let finished = false;
  try {
    for await (const response of call as AsyncIterable<ClientResponseProto>) {
      yield checked(response);
    }
    finished = true;
  } catch (err) {
    throw GateClientError.from(err);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (!finished) cancel();
  }
}

/** The client side of processStream: write requests, iterate answers. */
export class GateDuplexStream implements AsyncIterable<ClientResponseProto> {
  private iterating = false;

  constructor(
    private readonly call: grpc.ClientDuplexStream<ClientRequestProto, ClientResponseProto>,
    private readonly build: (body: ClientRequestBody) => ClientRequestProto,
    private readonly signal: AbortSignal | undefined,
  ) {
    // Errors surface through iteration; this listener keeps an unread stream from throwing.
    call.on('error', () => {});
  }

  write(body: ClientRequestBody): boolean {
    return this.call.write(this.build(body));
  }

  /** Writes a partialPredict whose data is `value` JSON-encoded. */
  writeJson(value: unknown, flags: { start?: boolean; finish?: boolean; config?: unknown; dataType?: string } = {}): boolean {
    const partialPredict: PartialPredictRequestProto = { data: jsonPayload(value, flags.dataType) };
    if (flags.config !== undefined) partialPredict.config = jsonPayload(flags.config);
    if (flags.start !== undefined) partialPredict.start = flags.start;
    if (flags.finish !== undefined) partialPredict.finish = flags.finish;
    return this.write({ partialPredict });
  }

  /** Half-closes: no more requests; answers keep coming. */
  end(): void {
    this.call.end();
  }

  cancel(): void {
    this.call.cancel();
  }

  /** The answers; an error frame or a transport failure throws GateClientError. Iterate once. */
  [Symbol.asyncIterator](): AsyncIterator<ClientResponseProto> {
    if (this.iterating) throw new Error('A GateDuplexStream can be iterated once');
    this.iterating = true;
    return readResponses(this.call, this.signal, () => this.call.cancel());
  }

  /** The JSON value of every answer frame that has data. */
  async *json<T = unknown>(): AsyncGenerator<T, void, undefined> {
    for await (const response of this) {
      const payload = responsePayload(response);
      if (payload && (payload.json !== undefined || payload.protobuf !== undefined)) yield jsonOf<T>(payload);
    }
  }
}

export function createGateClient(options: GateClientOptions): GateClient {
  return new GateClient(options);
}
