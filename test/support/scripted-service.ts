/**
 * A model service for tests on the raw Gate protocol (test/support/raw-gate-client.ts), scripted by the
 * request data it receives. JSON data:
 *   {"echo": x}        answers {"echo": x, "config": <config text or null>, "dataType": <or null>}
 *   {"hold": "key"}    answers nothing until `release("key")` (for 204, cancel and cap tests)
 *   {"fail": {...}}    answers `error` with the given ApiErrorProto fields
 *   {"big": n}         answers {"text": "a…"} with n characters
 *   {"stream": n}      answers n partialPredict frames {"chunk": i}
 *   {"mirror": …}      answers the request's data text exactly as received
 *   {"frame": {...}}   answers with that frame as given (statuses, headers, payloads to judge)
 * Protobuf data is answered with {"bytes": <length>, "sha256": <hex>}. A `batch` request is answered
 * item by item (matched by the items' requestIds): {"fail": …} items with an item error, the others
 * with {"echo": x, "config": …, "batchSize": n}.
 * Every predict request and every `cancel` is recorded; each gateway heartbeat is answered. With `reconnect`, a lost stream is opened
 * again (same instanceBootUuid), as SDKs do when their gateway restarts.
 */
import { createHash } from 'node:crypto';
import type { BatchRequestProto, GateToServiceProto, PredictRequestProto } from '../../proto/src/index.js';
import { RawServiceStream, json, rawClient, type RawClient } from './raw-gate-client.js';

export interface ReceivedPredict {
  requestId: number;
  predict: PredictRequestProto;
  headers: Record<string, string>;
  /** The data as text (JSON) or undefined (protobuf). */
  text: string | undefined;
}

export interface ReceivedBatch {
  requestId: number;
  config: string | null;
  items: Array<{ requestId: number; text: string | undefined; headers: Record<string, string> }>;
}

export interface ScriptedServiceOptions {
  /** Reopen the stream when it ends (gateway restart). */
  reconnect?: boolean;
  /** Delay before answering `echo` and `mirror` requests (ms). */
  answerDelayMs?: number;
  bootUuid?: string;
}

export class ScriptedService {
  readonly received: ReceivedPredict[] = [];
  readonly cancels: number[] = [];
  readonly batches: ReceivedBatch[] = [];
  readonly client: RawClient;
  stream!: RawServiceStream;
  readonly #token: string;
  readonly #options: ScriptedServiceOptions;
  readonly #held = new Map<string, number>();
  #stopped = false;
  #connections = 0;
  #registered: RawServiceStream | undefined;
  #waiters: (() => void)[] = [];

  constructor(address: string, token: string, options: ScriptedServiceOptions = {}) {
    this.client = rawClient(address);
    this.#token = token;
    this.#options = { bootUuid: `scripted-${Math.random().toString(36).slice(2)}`, ...options };
    this.#connect();
  }

  /** How many streams were registered so far (1 + reconnects). */
  get connections(): number {
    return this.#connections;
  }

  #connect(): void {
    const stream = new RawServiceStream(this.client);
    this.stream = stream;
    stream.startServing(this.#token, this.#options.bootUuid);
    stream.call.on('data', (m: GateToServiceProto) => this.#onMessage(stream, m));
    const lost = () => {
      if (this.#stopped || !this.#options.reconnect || this.stream !== stream) return;
      setTimeout(() => {
        if (!this.#stopped && this.stream === stream) this.#connect();
      }, 100);
    };
    stream.call.on('end', lost);
    stream.call.on('error', lost);
  }

  /** Resolves once the gateway sent serviceInfo on the current stream (at once if it already did). */
  async ready(timeoutMs = 10_000): Promise<void> {
    await this.until(() => this.#registered === this.stream && !this.stream.ended, timeoutMs, 'registration');
  }

  #onMessage(stream: RawServiceStream, m: GateToServiceProto): void {
    if (m.body === 'serviceInfo') {
      this.#connections++;
      this.#registered = stream;
      this.#notify();
      return;
    }
    if (m.body === 'heartBeat') {
      stream.send({ heartBeat: {} }); // as SDKs do: the gateway drops a silent stream
      return;
    }
    if (m.body === 'cancel') {
      this.cancels.push(Number(m.cancel?.requestIdToCancel ?? 0));
      this.#notify();
      return;
    }
    if (m.body === 'batch' && m.batch) {
      this.#answerBatch(stream, Number(m.requestId), m.batch);
      return;
    }
    if (m.body !== 'predict' || !m.predict) return;
    const requestId = Number(m.requestId);
    const data = m.predict.data ?? {};
    const text = data.json;
    this.received.push({ requestId, predict: m.predict, headers: m.headers ?? {}, text });
    this.#notify();
    if (text === undefined) {
      const bytes = Buffer.from(data.protobuf ?? []);
      this.#answer(stream, requestId, { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
      return;
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      stream.send({ requestId, error: { code: 'platform-action.common.bad-request', message: 'data is not JSON' } });
      return;
    }
    if (typeof parsed !== 'object' || parsed === null) parsed = { echo: parsed };
    if ('hold' in parsed) this.#held.set(String(parsed.hold), requestId);
    else if ('fail' in parsed) stream.send({ requestId, error: parsed.fail as object });
    else if ('frame' in parsed) stream.send({ requestId, ...(parsed.frame as object) });
    else if ('big' in parsed) this.#answer(stream, requestId, { text: 'a'.repeat(Number(parsed.big)) });
    else if ('stream' in parsed) {
      const n = Number(parsed.stream);
      for (let i = 0; i < n; i++)
        stream.send({ requestId, partialPredict: { data: json({ chunk: i }), start: i === 0, finish: i === n - 1 } });
    } else if ('mirror' in parsed) this.#later(stream, () => stream.send({ requestId, predict: { data: { json: text } } }));
    else
      this.#later(stream, () =>
        this.#answer(stream, requestId, {
          echo: parsed.echo ?? parsed,
          config: m.predict!.config?.json ?? null,
          dataType: data.dataType ?? null,
        }),
      );
  }

  #answerBatch(stream: RawServiceStream, requestId: number, batch: BatchRequestProto): void {
    const config = batch.config?.json ?? null;
    const items = (batch.data ?? []).map((item) => ({
      requestId: Number(item.requestId),
      text: item.data?.json,
      headers: item.headers ?? {},
    }));
    this.batches.push({ requestId, config, items });
    this.#notify();
    const data = items.map((item) => {
      const parsed = JSON.parse(item.text ?? 'null') as Record<string, unknown>;
      if (parsed && typeof parsed === 'object' && 'fail' in parsed) return { requestId: item.requestId, error: parsed.fail as object };
      return { requestId: item.requestId, predict: { data: json({ echo: parsed?.echo ?? parsed, config, batchSize: items.length }) } };
    });
    stream.send({ requestId, batch: { data } });
  }

  /** Sends after `answerDelayMs`; an answer for a stream that died meanwhile is dropped, as an SDK's would be. */
  #later(stream: RawServiceStream, send: () => void): void {
    const guarded = () => {
      if (!stream.ended) send();
    };
    if (this.#options.answerDelayMs) setTimeout(guarded, this.#options.answerDelayMs);
    else guarded();
  }

  #answer(stream: RawServiceStream, requestId: number, value: unknown): void {
    stream.send({ requestId, predict: { data: json(value) } });
  }

  /** Answers a held request; `value` defaults to {"released": key}. Returns its requestId. */
  release(key: string, value: unknown = { released: key }): number {
    const requestId = this.#held.get(key);
    if (requestId === undefined) throw new Error(`no held request '${key}'`);
    this.#held.delete(key);
    this.#answer(this.stream, requestId, value);
    return requestId;
  }

  /** The requestId of a held request, once it arrived. */
  async heldRequest(key: string, timeoutMs = 10_000): Promise<number> {
    await this.until(() => this.#held.has(key), timeoutMs, `held request '${key}'`);
    return this.#held.get(key)!;
  }

  isHeld(key: string): boolean {
    return this.#held.has(key);
  }

  /** Waits until `check` holds, re-checking on every message. */
  async until(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`scripted service: timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  #notify(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Ends the current stream (the service dies); with `reconnect` a new one follows. */
  drop(): void {
    this.stream.cancel();
  }

  close(): void {
    this.#stopped = true;
    this.stream.close();
    this.client.close();
  }
}
