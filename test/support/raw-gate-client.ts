/**
 * A client of the Gate protocol written straight from proto/gate.proto, without the SDK: it plays a
 * model service (processAsync) or a caller (process*), so tests see exactly what goes on the wire.
 */
import * as grpc from '@grpc/grpc-js';
import type {
  ClientRequestProto,
  ClientResponseProto,
  GateToServiceProto,
  ServiceDescriptorProto,
  ServiceToGateProto,
} from '../../proto/src/index.js';
import { BULK_LANE, GateHeaders, MAX_MESSAGE_BYTES, gateClientConstructor } from '../../proto/src/index.js';

export type RawClient = grpc.Client & Record<string, any>;

export function rawClient(address: string): RawClient {
  const Gate = gateClientConstructor();
  return new Gate(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  }) as RawClient;
}

/** One processAsync stream with a queue of what the gateway sent. */
export class RawServiceStream {
  readonly received: GateToServiceProto[] = [];
  readonly call: grpc.ClientDuplexStream<ServiceToGateProto, GateToServiceProto>;
  ended = false;
  #waiters: (() => void)[] = [];

  /**
   * `answerHeartbeats` (default true) answers each gateway heartBeat, as a real service does, so a
   * slow test run cannot outlast the 3 intervals + 1 s silence limit; tests of that limit turn it off.
   */
  constructor(client: RawClient, options: { answerHeartbeats?: boolean } = {}) {
    const answerHeartbeats = options.answerHeartbeats ?? true;
    this.call = client.processAsync();
    this.call.on('data', (m: GateToServiceProto) => {
      if (answerHeartbeats && m.body === 'heartBeat') this.call.write({ heartBeat: {} });
      this.received.push(m);
      this.#notify();
    });
    const end = () => {
      this.ended = true;
      this.#notify();
    };
    this.call.on('end', end);
    this.call.on('error', end);
  }

  #notify(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  send(message: ServiceToGateProto): void {
    this.call.write(message);
  }

  startServing(token: string, instanceBootUuid?: string, serviceDescriptor: ServiceDescriptorProto = { name: 'raw' }): void {
    this.send({ startServing: { connectionToken: token, serviceDescriptor, instanceBootUuid, hostname: 'raw-test' } });
  }

  /** Opens this stream as the bulk lane of the instance `instanceBootUuid` (docs/gate-protocol.md, item 11). */
  startBulkLane(token: string, instanceBootUuid: string): void {
    this.send({
      startServing: { connectionToken: token, serviceDescriptor: { name: 'raw' }, instanceBootUuid },
      headers: { [GateHeaders.lane]: BULK_LANE },
    });
  }

  /** The next message matching `pred` (already received or arriving later). */
  async next(pred: (m: GateToServiceProto) => boolean, timeoutMs = 5000): Promise<GateToServiceProto> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex(pred);
      if (index >= 0) return this.received.splice(index, 1)[0]!;
      if (this.ended) throw new Error('stream ended before the expected message');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a gateway message');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async untilEnded(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('stream did not end');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    try {
      this.call.end();
    } catch {
      // already closed
    }
  }

  cancel(): void {
    this.call.cancel();
  }
}

export function processUnary(client: RawClient, request: ClientRequestProto, metadata = new grpc.Metadata()): Promise<ClientResponseProto> {
  return new Promise((resolve, reject) =>
    client.process(request, metadata, (err: Error | null, res: ClientResponseProto) => (err ? reject(err) : resolve(res))),
  );
}

export function processResponseStream(client: RawClient, request: ClientRequestProto): Promise<ClientResponseProto[]> {
  return new Promise((resolve, reject) => {
    const out: ClientResponseProto[] = [];
    const call = client.processResponseStream(request);
    call.on('data', (m: ClientResponseProto) => out.push(m));
    call.on('end', () => resolve(out));
    call.on('error', reject);
  });
}

export const json = (value: unknown) => ({ json: JSON.stringify(value) });

/**
 * A raw service stream registered with `token` that answers every predict with `{"ok": true}` (and
 * keeps no queue of what it received when `forget` is set, for long fuzz runs).
 */
export function startOkService(client: RawClient, token: string, name: string, options: { forget?: boolean } = {}): RawServiceStream {
  const service = new RawServiceStream(client);
  service.startServing(token, name);
  service.call.on('data', (m: GateToServiceProto) => {
    if (m.body === 'predict') service.send({ requestId: m.requestId, predict: { data: json({ ok: true }) } });
    if (options.forget) service.received.length = 0;
  });
  return service;
}
