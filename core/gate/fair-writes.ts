import { GateHeaders, type GateToServiceProto, type PayloadProto } from '../../proto/src/index.js';

/**
 * Bytes a service stream may have handed to its transport, not yet sent, before further requests wait
 * in their caller account's queue here. A gRPC message goes out whole, so a request written behind
 * another waits for all of it: the stream's own buffer kept every message in the order written, and
 * one account's 4 MiB ext calls (issue 25's hostile bench) held every other account's small calls
 * behind them. Past this, the next message is chosen fairly between the accounts that wait.
 */
export const STREAM_BYTES_IN_FLIGHT = 256 * 1024;

/** Bytes each waiting account may send per turn of the rotation (deficit round robin). */
const QUANTUM = 64 * 1024;

/** What the writes need of the stream: a Node writable in object mode (grpc-js's server stream is one). */
export interface MessageStream {
  write(message: GateToServiceProto, written: (err?: Error | null) => void): boolean;
  readonly writableNeedDrain: boolean;
  readonly destroyed: boolean;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  end(): void;
}

/** One caller account's requests waiting for the stream, oldest first, and its credit of bytes. */
interface Lane {
  readonly queue: Waiting[];
  deficit: number;
}

/** A streamed request waiting for room (`whenWritable`), with its account's queue when it has one. */
interface Waiter {
  readonly lane: string | undefined;
  readonly resolve: () => void;
}

interface Waiting {
  readonly message: GateToServiceProto;
  readonly bytes: number;
}

/**
 * The writes of one service stream, shared fairly between the accounts whose calls it carries. While
 * the stream has room (less than STREAM_BYTES_IN_FLIGHT handed over and not sent, and below its own
 * high-water mark) a message is written at once, as before; past that, requests wait in a queue per
 * caller account (the `Z-callerAccountId` their first message carries), and the queues take turns by
 * bytes (deficit round robin): an account with large requests queued sends one of them while another
 * account's small requests go before its next. Order within a request, and within an account, is kept.
 * Messages of no call (heartbeats, cluster updates, stopServing) are written at once.
 *
 * Memory: the queues hold only messages the gateway has already admitted and would otherwise have
 * handed to the stream's own buffer at once (each within the message and body limits, their number
 * within the account's call quotas); a cancelled request's waiting messages are dropped. Streamed
 * requests wait (`whenWritable`) until their account's queue is empty and the stream has room, which
 * pushes back on their caller.
 */
export class FairWrites {
  readonly #stream: MessageStream;
  /** Sizes of the messages handed to the stream whose write has not completed, oldest first. */
  readonly #sizes: number[] = [];
  #inFlight = 0;
  /** Accounts with requests waiting, in turn order (a Map keeps insertion order; a lane's turn ends by moving it last). */
  readonly #lanes = new Map<string, Lane>();
  /** The account of each request this stream carries, from its first message. */
  readonly #laneOf = new Map<number, string>();
  #waiters: Waiter[] = [];
  #closed = false;
  /** Whether the waiting requests are being written (from a write's callback or 'drain'). */
  #pumping = false;
  /** One callback for every write: writes complete in the order they were made. */
  readonly #written = () => {
    this.#inFlight -= this.#sizes.shift() ?? 0;
    this.#pump();
  };

  constructor(stream: MessageStream) {
    this.#stream = stream;
    stream.on('drain', () => this.#pump());
    stream.on('close', () => this.#abandon());
  }

  /** Writes `message` (of `bytes`, requestBytes) now, or queues it behind its account's earlier requests (see the class). */
  send(message: GateToServiceProto, bytes: number): void {
    if (this.#closed) return;
    const lane = this.#laneFor(message);
    // A stream already gone takes the write as before (it calls back with an error); the session's end fails the call.
    if (lane === undefined || this.#stream.destroyed || (this.#lanes.size === 0 && this.#hasRoom())) {
      this.#write(message, bytes);
      return;
    }
    if (message.cancel) this.#drop(lane, Number(message.requestId ?? 0));
    let waiting = this.#lanes.get(lane);
    if (!waiting) this.#lanes.set(lane, (waiting = { queue: [], deficit: 0 }));
    waiting.queue.push({ message, bytes });
  }

  /** Resolves when a request's further messages would be written at once (or the stream is gone). */
  whenWritable(requestId?: number): Promise<void> {
    const lane = requestId === undefined ? undefined : this.#laneOf.get(requestId);
    if (this.#roomFor(lane)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ lane, resolve }));
  }

  /** The request settled: its account is forgotten. */
  forget(requestId: number): void {
    this.#laneOf.delete(requestId);
  }

  /** The session is closed: nothing more is written, waiting messages are dropped, waiters go on, and the gateway's side of the stream ends. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#laneOf.clear();
    this.#abandon();
    try {
      this.#stream.end();
    } catch {
      // The transport is already gone; nothing to end.
    }
  }

  /** The stream is gone: its waiting messages with it (as its own buffer's were), and waiters go on. */
  #abandon(): void {
    this.#lanes.clear();
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
  }

  /** The account queue of a call's message; undefined for messages of no call. */
  #laneFor(message: GateToServiceProto): string | undefined {
    const requestId = Number(message.requestId ?? 0);
    if (!requestId) return undefined;
    const account = message.headers?.[GateHeaders.callerAccountId];
    if (account === undefined) return this.#laneOf.get(requestId);
    this.#laneOf.set(requestId, account);
    return account;
  }

  #hasRoom(): boolean {
    return this.#inFlight < STREAM_BYTES_IN_FLIGHT && !this.#stream.writableNeedDrain;
  }

  #roomFor(lane: string | undefined): boolean {
    return (
      this.#closed || this.#stream.destroyed || (this.#hasRoom() && (lane === undefined ? this.#lanes.size === 0 : !this.#lanes.has(lane)))
    );
  }

  #write(message: GateToServiceProto, bytes: number): void {
    try {
      // A writable never calls back synchronously, so the size is in place before #written runs.
      this.#stream.write(message, this.#written);
    } catch (err) {
      // From send() the session hears of it (and refuses the call); from a write's callback there is
      // no caller to tell: the stream is broken, what waits for it is dropped, and the session's end
      // fails the calls.
      if (!this.#pumping) throw err;
      this.#abandon();
      return;
    }
    this.#sizes.push(bytes);
    this.#inFlight += bytes;
  }

  /** Writes waiting requests while the stream has room, the accounts taking turns by bytes. */
  #pump(): void {
    this.#pumping = true;
    try {
      this.#turns();
    } finally {
      this.#pumping = false;
    }
    if (this.#waiters.length > 0) this.#wake();
  }

  #turns(): void {
    while (!this.#closed && this.#lanes.size > 0 && this.#hasRoom()) {
      const [key, lane] = this.#lanes.entries().next().value as [string, Lane];
      const next = lane.queue[0]!;
      if (lane.deficit < next.bytes && this.#lanes.size > 1) {
        // Its turn ends: a credit for the next turn, and the next account goes first.
        lane.deficit += QUANTUM;
        this.#lanes.delete(key);
        this.#lanes.set(key, lane);
        continue;
      }
      lane.deficit = Math.max(0, lane.deficit - next.bytes);
      lane.queue.shift();
      if (lane.queue.length === 0) this.#lanes.delete(key);
      this.#write(next.message, next.bytes);
    }
  }

  #wake(): void {
    const still: Waiter[] = [];
    for (const waiter of this.#waiters) {
      if (this.#roomFor(waiter.lane)) waiter.resolve();
      else still.push(waiter);
    }
    this.#waiters = still;
  }

  /** A cancelled request's messages still waiting are never written. */
  #drop(key: string, requestId: number): void {
    const lane = this.#lanes.get(key);
    if (!lane) return;
    const kept = lane.queue.filter((w) => Number(w.message.requestId ?? 0) !== requestId);
    lane.queue.splice(0, lane.queue.length, ...kept);
  }
}

/**
 * About how many bytes a message takes on the wire: its payloads (the caller's data, which is what
 * can be large), plus a little for the rest. Cheap: no encoding.
 */
export function requestBytes(message: GateToServiceProto): number {
  let bytes = 64;
  const { predict, partialPredict, ext, batch, fit } = message;
  if (predict) bytes += payloadBytes(predict.data) + payloadBytes(predict.config);
  else if (partialPredict) bytes += payloadBytes(partialPredict.data) + payloadBytes(partialPredict.config);
  else if (ext) bytes += extBytes(ext);
  else if (batch) {
    bytes += payloadBytes(batch.config);
    for (const item of batch.data ?? []) bytes += payloadBytes(item.data);
  } else if (fit) bytes += payloadBytes(fit.trainData) + payloadBytes(fit.targetsData) + payloadBytes(fit.config);
  return bytes;
}

function payloadBytes(payload: PayloadProto | null | undefined): number {
  return payload ? (payload.json?.length ?? 0) + (payload.protobuf?.length ?? 0) : 0;
}

/** A large ext map travels as the caller's bytes (core/grpc/raw-ext.ts): their length, without decoding them. */
function extBytes(ext: NonNullable<GateToServiceProto['ext']>): number {
  const raw = (ext as { bytes?: unknown }).bytes;
  if (Buffer.isBuffer(raw)) return raw.length;
  let bytes = (ext.methodName ?? '').length;
  for (const key in ext.params ?? {}) bytes += key.length + payloadBytes(ext.params![key]);
  return bytes;
}
