/**
 * A small stand-in for the gateway's side of the Gate protocol, on a real @grpc/grpc-js server bound to
 * 127.0.0.1:0 with the project's proto: healthCheck, processAsync (every stream recorded, with helpers to
 * script what the gate sends and to wait for what the service sends), and minimal client calls.
 */
import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES, gateServiceDefinition } from '../../../proto/src/index.js';
import { isTerminal } from '../../../core/gate/service-call.js';
import type {
  ClientRequestProto,
  ClientResponseProto,
  GateToServiceProto,
  HeartBeatProto,
  ServiceToGateProto,
} from '../../../proto/src/index.js';

/** Polls `check` until it returns something other than undefined/false; fails after timeoutMs. */
export async function eventually<T>(check: () => T | undefined | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export type ClientEnd = 'half-closed' | 'cancelled';

/** One processAsync stream as the gate sees it. */
export class HarnessStream {
  readonly received: ServiceToGateProto[] = [];
  /** How the service ended its side, once it did. */
  clientEnd: ClientEnd | undefined;
  serverEnded = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly index: number,
    private readonly call: grpc.ServerDuplexStream<ServiceToGateProto, GateToServiceProto>,
    endOnHalfClose: boolean,
  ) {
    call.on('data', (message: ServiceToGateProto) => this.received.push(message));
    call.on('end', () => {
      // A cancel (RST_STREAM) also ends the readable side: give 'cancelled' a moment to arrive first.
      setTimeout(() => {
        if (this.clientEnd !== undefined) return;
        this.clientEnd = 'half-closed';
        this.stopHeartbeats();
        if (endOnHalfClose) this.end();
      }, 20);
    });
    call.on('cancelled', () => {
      this.clientEnd ??= 'cancelled';
      this.serverEnded = true;
      this.stopHeartbeats();
    });
    call.on('error', () => {});
  }

  get open(): boolean {
    return this.clientEnd === undefined && !this.serverEnded;
  }

  send(message: GateToServiceProto): void {
    if (this.serverEnded) return;
    this.call.write(message);
  }

  /** heartBeat{status:"Ok", interval} now and every interval ms, as the gateway does. */
  startHeartbeats(interval: number): void {
    this.stopHeartbeats();
    const beat: HeartBeatProto = { status: 'Ok', interval };
    this.send({ heartBeat: beat });
    this.heartbeatTimer = setInterval(() => this.send({ heartBeat: beat }), interval);
  }

  stopHeartbeats(): void {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  /** Ends the gate's side with status OK. */
  end(): void {
    if (this.serverEnded) return;
    this.serverEnded = true;
    this.stopHeartbeats();
    this.call.end();
  }

  /** Ends the gate's side with an error status (UNAVAILABLE by default). */
  fail(code: grpc.status = grpc.status.UNAVAILABLE, details = 'harness failure'): void {
    if (this.serverEnded) return;
    this.serverEnded = true;
    this.stopHeartbeats();
    // grpc-js turns an 'error' event into the call's status and ends it (destroy() would skip the status).
    this.call.emit('error', Object.assign(new Error(details), { code, details }));
  }

  /** The first message the service sent that matches. */
  waitFor(match: (m: ServiceToGateProto) => boolean, timeoutMs = 5000, what = 'a message'): Promise<ServiceToGateProto> {
    return eventually(() => this.received.find(match), timeoutMs, what);
  }

  /** The terminal answer (predict, ext, batch, fit, status, error or partialPredict.finish) to a requestId. */
  waitForAnswer(requestId: number, timeoutMs = 5000): Promise<ServiceToGateProto> {
    return this.waitFor((m) => m.requestId === requestId && isTerminal(m), timeoutMs, `the answer to request ${requestId}`);
  }

  messagesFor(requestId: number): ServiceToGateProto[] {
    return this.received.filter((m) => m.requestId === requestId && m.body !== 'heartBeat');
  }

  count(body: keyof ServiceToGateProto | string): number {
    return this.received.filter((m) => m.body === body).length;
  }

  waitClientEnd(timeoutMs = 5000): Promise<ClientEnd> {
    return eventually(() => this.clientEnd, timeoutMs, 'the service to end its side');
  }
}

/** Scripted answers of the client calls. */
export interface ClientScript {
  process?: (
    request: ClientRequestProto,
    call: grpc.ServerUnaryCall<ClientRequestProto, ClientResponseProto>,
  ) => ClientResponseProto | Promise<ClientResponseProto> | 'never';
  processResponseStream?: (request: ClientRequestProto) => ClientResponseProto[] | AsyncIterable<ClientResponseProto>;
  /** Gets every request of the stream and writes answers through `write`; the stream ends when it returns. */
  processStream?: (requests: AsyncIterable<ClientRequestProto>, write: (response: ClientResponseProto) => void) => Promise<void>;
}

/** The messages of a readable call as an async iterable that ends on 'end', without destroying the call. */
function readAll<T>(call: NodeJS.EventEmitter, onItem: (item: T) => void): AsyncIterable<T> {
  const items: T[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  call.on('data', (item: T) => {
    onItem(item);
    items.push(item);
    wake?.();
  });
  const finish = (): void => {
    ended = true;
    wake?.();
  };
  call.on('end', finish);
  call.on('cancelled', finish);
  call.on('error', finish);
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (items.length > 0) yield items.shift() as T;
        else if (ended) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

export interface HarnessOptions {
  /** What healthCheck answers in `status` (default "Ok"). */
  healthStatus?: string;
  /** Send heartBeat{interval} on every new stream at once and every interval after (off by default). */
  heartbeatInterval?: number;
  /** End the gate's side when the service half-closes (default true, as a gateway does). */
  endOnHalfClose?: boolean;
  client?: ClientScript;
}

export class HarnessGate {
  readonly streams: HarnessStream[] = [];
  healthChecks = 0;
  healthStatus: string;
  readonly clientRequests: ClientRequestProto[] = [];
  readonly clientMetadata: grpc.Metadata[] = [];

  private constructor(
    private readonly server: grpc.Server,
    readonly port: number,
    private readonly options: HarnessOptions,
  ) {
    this.healthStatus = options.healthStatus ?? 'Ok';
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  static async start(options: HarnessOptions = {}): Promise<HarnessGate> {
    const server = new grpc.Server({
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    });
    let gate: HarnessGate | undefined;
    const impl: grpc.UntypedServiceImplementation = {
      healthCheck: (_call: grpc.ServerUnaryCall<HeartBeatProto, HeartBeatProto>, callback: grpc.sendUnaryData<HeartBeatProto>) => {
        gate!.healthChecks++;
        callback(null, { status: gate!.healthStatus });
      },
      processAsync: (call: grpc.ServerDuplexStream<ServiceToGateProto, GateToServiceProto>) => {
        gate!.acceptStream(call);
      },
      process: (call: grpc.ServerUnaryCall<ClientRequestProto, ClientResponseProto>, callback: grpc.sendUnaryData<ClientResponseProto>) => {
        gate!.clientRequests.push(call.request);
        gate!.clientMetadata.push(call.metadata);
        const script = gate!.options.client?.process;
        if (!script) return callback({ code: grpc.status.UNIMPLEMENTED, details: 'not scripted' });
        Promise.resolve(script(call.request, call)).then(
          (response) => {
            if (response !== 'never') callback(null, response);
          },
          (err: Error) => callback({ code: grpc.status.INTERNAL, details: err.message }),
        );
      },
      processResponseStream: (call: grpc.ServerWritableStream<ClientRequestProto, ClientResponseProto>) => {
        gate!.clientRequests.push(call.request);
        const script = gate!.options.client?.processResponseStream;
        if (!script) return void call.emit('error', Object.assign(new Error('not scripted'), { code: grpc.status.UNIMPLEMENTED }));
        void (async () => {
          for await (const response of script(call.request) as AsyncIterable<ClientResponseProto>) call.write(response);
          call.end();
        })();
      },
      processStream: (call: grpc.ServerDuplexStream<ClientRequestProto, ClientResponseProto>) => {
        const script = gate!.options.client?.processStream;
        if (!script) return void call.emit('error', Object.assign(new Error('not scripted'), { code: grpc.status.UNIMPLEMENTED }));
        // Read through events: a for-await over the call would destroy it when the client half-closes,
        // before the script has written its last answers.
        const requests = readAll<ClientRequestProto>(call, (request) => gate!.clientRequests.push(request));
        void script(requests, (response) => call.write(response)).then(() => call.end());
      },
    };
    server.addService(gateServiceDefinition(), impl);
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, boundPort) =>
        err ? reject(err) : resolve(boundPort),
      );
    });
    gate = new HarnessGate(server, port, options);
    return gate;
  }

  private acceptStream(call: grpc.ServerDuplexStream<ServiceToGateProto, GateToServiceProto>): void {
    const stream = new HarnessStream(this.streams.length, call, this.options.endOnHalfClose ?? true);
    this.streams.push(stream);
    if (this.options.heartbeatInterval !== undefined) stream.startHeartbeats(this.options.heartbeatInterval);
  }

  /** The index-th processAsync stream (0-based), once the service opened it. */
  stream(index: number, timeoutMs = 5000): Promise<HarnessStream> {
    return eventually(() => this.streams[index], timeoutMs, `processAsync stream #${index}`);
  }

  /** The stream opened most recently that is still open. */
  openStream(timeoutMs = 5000): Promise<HarnessStream> {
    return eventually(() => [...this.streams].reverse().find((s) => s.open), timeoutMs, 'an open processAsync stream');
  }

  async close(): Promise<void> {
    for (const stream of this.streams) stream.stopHeartbeats();
    this.server.forceShutdown();
  }
}
