/**
 * A streaming model service on the raw Gate protocol, for the streaming and memory scenarios: each
 * predict is answered by `chunks` partial answers, one every `intervalMs`, each a
 * `chat.completion.chunk` stamped with monoMs() right before it is written to the stream
 * (`bench_t`), plus the time the request arrived (`bench_t0`). monoMs() reads the system-wide
 * monotonic clock, so a reader in another process can compare. The SDK is not used on purpose: it
 * holds each chunk back until the next is ready (to mark `finish` on the last), which would put one
 * interval between a stamp and its departure; nor is the tests' raw model (test/support), which
 * keeps every message it receives for assertions.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { GateToServiceProto, ServiceToGateProto } from '../../core/gate/messages.js';
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

const chunkJson = (i: number, t0: number, last: boolean): string =>
  `{"id":"chatcmpl-ticker","object":"chat.completion.chunk","created":1700000000,"model":"ticker","choices":[{"index":0,"delta":${
    i === 0 ? '{"role":"assistant","content":""}' : '{"content":"tok "}'
  },"logprobs":null,"finish_reason":${last ? '"stop"' : 'null'}}],"bench_t0":${t0},"bench_t":${monoMs()}}`;

export async function startTicker(options: TickerOptions): Promise<Ticker> {
  const stub = createGateStub(options.address);
  const call = stub.processAsync(new grpc.Metadata());
  const timers = new Map<number, NodeJS.Timeout>();
  let heartbeat: NodeJS.Timeout | undefined;
  const send = (message: ServiceToGateProto) => call.write(message);

  const answer = (requestId: number) => {
    const t0 = monoMs();
    let i = 0;
    const tick = () => {
      const last = options.chunks > 0 && i === options.chunks - 1;
      send({ requestId, partialPredict: { data: { json: chunkJson(i, t0, last) }, start: i === 0, finish: last } });
      i++;
      if (last) {
        clearInterval(timers.get(requestId));
        timers.delete(requestId);
      }
    };
    tick();
    if (options.chunks !== 1) timers.set(requestId, setInterval(tick, options.intervalMs));
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
        case 'cancel': {
          const id = Number(message.cancel?.requestIdToCancel);
          clearInterval(timers.get(id));
          timers.delete(id);
          return;
        }
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
      return timers.size;
    },
    close() {
      for (const timer of timers.values()) clearInterval(timer);
      timers.clear();
      clearInterval(heartbeat);
      call.end();
      stub.close();
    },
  };
}
