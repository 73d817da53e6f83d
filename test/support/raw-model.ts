/**
 * A model service on the raw Gate protocol for adapter tests: each predict request goes to a handler
 * that returns one answer (sent as `predict`) or an async iterable (sent as `partialPredict` frames,
 * `finish` on a last data-less frame). What the gateway sent is kept for assertions.
 */
import type { GateToServiceProto } from '../../proto/src/index.js';
import { RawServiceStream, rawClient, type RawClient } from './raw-gate-client.js';

export interface RawPredict {
  requestId: number;
  data: any;
  config: any;
  dataType: string | undefined;
  configType: string | undefined;
  /** The data JSON text exactly as it arrived. */
  dataText: string;
  headers: Record<string, string>;
}

/** Thrown by a handler: answered as the service `error` frame. */
export class RawServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly statusCode?: number,
  ) {
    super(message);
  }
}

export type RawHandler = (request: RawPredict) => unknown;

export interface RawModel {
  readonly stream: RawServiceStream;
  readonly requests: RawPredict[];
  readonly cancels: number[];
  close(): void;
}

const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> =>
  typeof v === 'object' && v !== null && typeof (v as any)[Symbol.asyncIterator] === 'function';

const payload = (value: unknown) => ({ json: typeof value === 'string' ? value : JSON.stringify(value) });

/** Connects a raw service with `token` and answers with `handler`; resolves once registered. */
export async function startRawModel(grpcAddress: string, token: string, handler: RawHandler): Promise<RawModel> {
  const client: RawClient = rawClient(grpcAddress);
  const stream = new RawServiceStream(client);
  const requests: RawPredict[] = [];
  const cancels: number[] = [];
  const cancelled = new Set<number>();
  stream.call.on('data', (m: GateToServiceProto) => {
    if (m.body === 'cancel') {
      const id = Number(m.cancel?.requestIdToCancel);
      cancels.push(id);
      cancelled.add(id);
      return;
    }
    if (m.body !== 'predict') return;
    const requestId = Number(m.requestId);
    const dataText = m.predict?.data?.json ?? 'null';
    const request: RawPredict = {
      requestId,
      data: JSON.parse(dataText),
      config: m.predict?.config?.json ? JSON.parse(m.predict.config.json) : undefined,
      dataType: m.predict?.data?.dataType || undefined,
      configType: m.predict?.config?.dataType || undefined,
      dataText,
      headers: m.headers ?? {},
    };
    requests.push(request);
    void answer(request);
  });

  async function answer(request: RawPredict): Promise<void> {
    const { requestId } = request;
    try {
      const result = await handler(request);
      if (!isAsyncIterable(result)) {
        stream.send({ requestId, predict: { data: payload(result) } });
        return;
      }
      for await (const part of result) {
        if (cancelled.has(requestId) || stream.ended) return;
        stream.send({ requestId, partialPredict: { data: payload(part) } });
      }
      stream.send({ requestId, partialPredict: { finish: true } });
    } catch (err) {
      if (stream.ended) return;
      const e = err as RawServiceError;
      stream.send({
        requestId,
        error: { code: e.code ?? 'platform-action.common.internal-error', message: e.message, statusCode: e.statusCode },
      });
    }
  }

  stream.startServing(token);
  await stream.next((m) => m.body === 'serviceInfo');
  return {
    stream,
    requests,
    cancels,
    close() {
      stream.close();
      client.close();
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
