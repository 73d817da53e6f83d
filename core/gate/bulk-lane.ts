import type { GateToServiceProto } from '../../proto/src/index.js';
import { FairWrites, type MessageStream } from './fair-writes.js';

/**
 * The second `processAsync` stream of one instance, for its large requests. A gRPC message goes out
 * whole, so on one stream a small request written behind a 4 MiB one waits until all of it has
 * crossed (and the service has read it): one account's large `ext` calls held every other account's
 * small calls of the same instance behind them (issue 25's hostile bench). With a lane, each request
 * of one message (predict, ext, batch, fit) of at least `minBytes` goes there, and so does its
 * cancel; the instance's own stream keeps carrying the small ones and every streamed request
 * (partialPredict), whose chunks must keep their order on one stream.
 *
 * Only a service that asks for it has one (docs/gate-protocol.md, "Bulk lane"): the gateway offers it
 * in `serviceInfo`, and the service opens it with a `startServing` marked `Z-lane: bulk`.
 */
export class BulkLane {
  /** The lane's writes, shared fairly between accounts like the main stream's. */
  readonly writes: FairWrites;
  readonly #minBytes: number;
  /** The requests written on the lane, until they settle. */
  readonly #requests = new Set<number>();

  constructor(stream: MessageStream, minBytes: number) {
    this.writes = new FairWrites(stream);
    this.#minBytes = minBytes;
  }

  /**
   * Whether `message` (of `bytes`, requestBytes) goes on the lane: a large request of one message, or
   * a later message (cancel) of one.
   */
  takes(message: GateToServiceProto, bytes: number): boolean {
    const requestId = Number(message.requestId ?? 0);
    if (!requestId) return false;
    if (this.#requests.has(requestId)) return true;
    const whole = message.predict ?? message.ext ?? message.batch ?? message.fit;
    if (!whole || bytes < this.#minBytes) return false;
    this.#requests.add(requestId);
    return true;
  }

  carries(requestId: number): boolean {
    return this.#requests.has(requestId);
  }

  forget(requestId: number): void {
    this.#requests.delete(requestId);
    this.writes.forget(requestId);
  }

  /** Ends the gateway's side of the lane; its waiting writes are dropped. */
  close(): void {
    this.writes.close();
    this.#requests.clear();
  }
}
