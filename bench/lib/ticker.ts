/**
 * A streaming model service on the raw Gate protocol, for the streaming and memory scenarios: each
 * predict is answered by `chunks` partial answers, one every `intervalMs`, each a
 * `chat.completion.chunk` stamped with monoMs() right before it is written to the stream
 * (`bench_t`), plus the time the request arrived (`bench_t0`), both in the chunk's content text
 * (STAMPS: a peer that re-serializes chunks keeps their content). monoMs() reads the system-wide
 * monotonic clock, so a reader in another process can compare. The SDK is not used on purpose: it
 * holds each chunk back until the next is ready (to mark `finish` on the last), which would put one
 * interval between a stamp and its departure; nor is the tests' raw model (test/support), which
 * keeps every message it receives for assertions.
 *
 * The same ticks can also be read directly from the service's side, without the gateway
 * (startDirectTicker): an SSE stream over plain HTTP from this process, the streaming scenario's
 * baseline for what the machine and loopback alone cost.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { GateToServiceProto, ServiceToGateProto } from '../../proto/src/index.js';
import { createGateStub } from '../../sdk/grpc.js';

export interface TickerOptions {
  address: string;
  token: string;
  intervalMs: number;
  /** Chunks per answer; 0 = until the request is cancelled. */
  chunks: number;
}

export interface Ticker {
  /** Requests being answered right now. */
  readonly active: number;
  close(): void;
}

/** Milliseconds (µs resolution) of CLOCK_MONOTONIC: the same clock in every process of the machine. */
export function monoMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

/** A chunk's stamps, in its content text: LiteLLM re-serializes chunks and drops fields it does not know. */
export const STAMPS = /bench_t0=([\d.]+) bench_t=([\d.]+)/;

const chunkJson = (i: number, t0: number, last: boolean): string =>
  `{"id":"chatcmpl-ticker","object":"chat.completion.chunk","created":1700000000,"model":"ticker","choices":[{"index":0,"delta":{${
    i === 0 ? '"role":"assistant",' : ''
  }"content":"bench_t0=${t0} bench_t=${monoMs()} "},"logprobs":null,"finish_reason":${last ? '"stop"' : 'null'}}]}`;

/**
 * Calls `write` with `chunks` stamped chunks (0 = without end), the first at once and then one
 * every `intervalMs`; `write`'s second argument marks the last. Returns a function that stops it.
 */
function tick(
  options: Pick<TickerOptions, 'intervalMs' | 'chunks'>,
  write: (json: string, index: number, last: boolean) => void,
): () => void {
  const t0 = monoMs();
  let i = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    const last = options.chunks > 0 && i === options.chunks - 1;
    write(chunkJson(i, t0, last), i, last);
    i++;
    if (last) clearInterval(timer);
  };
  next();
  if (options.chunks !== 1) timer = setInterval(next, options.intervalMs);
  return () => clearInterval(timer);
}

export async function startTicker(options: TickerOptions): Promise<Ticker> {
  const stub = createGateStub(options.address);
  const call = stub.processAsync(new grpc.Metadata());
  const running = new Map<number, () => void>();
  let heartbeat: NodeJS.Timeout | undefined;
  const send = (message: ServiceToGateProto) => call.write(message);

  const answer = (requestId: number) => {
    let finished = false;
    const stopTicking = tick(options, (json, i, last) => {
      send({ requestId, partialPredict: { data: { json }, start: i === 0, finish: last } });
      if (last) {
        finished = true;
        running.delete(requestId);
      }
    });
    if (!finished) running.set(requestId, stopTicking);
  };
  const stop = (requestId: number) => {
    running.get(requestId)?.();
    running.delete(requestId);
  };

  const registered = new Promise<void>((resolve, reject) => {
    call.on('data', (message: GateToServiceProto) => {
      switch (message.body) {
        case 'serviceInfo':
          resolve();
          return;
        case 'heartBeat': {
          const interval = Number(message.heartBeat?.interval ?? 0);
          if (!heartbeat && interval > 0) {
            heartbeat = setInterval(() => send({ heartBeat: { status: 'Ok' } }), interval);
            heartbeat.unref();
          }
          return;
        }
        case 'predict':
          answer(Number(message.requestId));
          return;
        case 'cancel':
          stop(Number(message.cancel?.requestIdToCancel));
          return;
        case 'error':
          reject(new Error(`ticker refused: ${message.error?.message}`));
          return;
        default:
      }
    });
    call.on('error', (err) => reject(err));
  });
  send({ startServing: { connectionToken: options.token, instanceBootUuid: randomUUID(), hostname: 'bench-ticker' } });
  await registered;
  return {
    get active() {
      return running.size;
    },
    close() {
      for (const id of [...running.keys()]) stop(id);
      clearInterval(heartbeat);
      call.end();
      stub.close();
    },
  };
}

/**
 * The same ticks served directly as SSE (`data: <chunk>` events, then `data: [DONE]`) to any POST
 * on 127.0.0.1, the request body read and ignored: what a reader gets from the service's side
 * without the gateway in between.
 */
export async function startDirectTicker(options: Pick<TickerOptions, 'intervalMs' | 'chunks'>): Promise<{ port: number; close(): void }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const stop = tick(options, (json, _i, last) => {
        res.write(`data: ${json}\n\n`);
        if (last) res.end('data: [DONE]\n\n');
      });
      res.once('close', stop);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => server.close(),
  };
}
