/**
 * Scenario 5: what the gateway and its chat adapter add to a stream. A ticker service (raw Gate
 * protocol, its own process) answers each request with `chunks` chunks, one every `intervalMs`,
 * each stamped with the machine's monotonic clock as it is written to the gRPC stream. The same
 * stream is read two ways at the same time, half the readers each:
 *
 * - http: the standard chat adapter (SSE), what an OpenAI client sees;
 * - grpc: `Gate.processResponseStream` with the SDK's GateClient, the gateway without the adapter.
 *
 * For each path, against the service's own stamps:
 * - first-chunk overhead = (first chunk read − request sent) − (first chunk stamped − request reached the service);
 * - chunk delivery = chunk read − chunk stamped, for every later chunk: what the path adds between chunks.
 * Both paths share the service, the gateway's core and the machine's load at that moment, so the
 * adapter's own overhead is http − grpc, percentile by percentile, in each round.
 */
import http from 'node:http';
import { BENCH_KEY, chatRequest } from '../lib/config.js';
import { Samples, spread, type Spread } from '../lib/stats.js';
import type { Systems } from '../lib/systems.js';
import { monoMs } from '../lib/ticker.js';
import { GateClient } from '../../sdk/index.js';

export interface StreamingOptions {
  rounds: number;
  /** Reading time per round (both paths at once). */
  durationSec: number;
  /** Streams read at the same time, half through each path. */
  concurrency: number;
  chunks: number;
  intervalMs: number;
  log: (line: string) => void;
}

export interface PathStats {
  streams: number;
  chunks: number;
  firstChunkMs: { p50: number; p99: number };
  firstChunkOverheadMs: { p50: number; p99: number };
  deliveryMs: { p50: number; p99: number };
}

type Quad = { firstChunkOverheadP50: Spread; firstChunkOverheadP99: Spread; deliveryP50: Spread; deliveryP99: Spread };

export interface StreamingResult {
  settings: Omit<StreamingOptions, 'log'>;
  rounds: { http: PathStats; grpc: PathStats }[];
  summary: {
    http: Quad;
    grpc: Quad;
    /** http − grpc per round: the adapter's own share. */
    adapter: Quad;
  };
}

class Recorder {
  readonly firstChunk = new Samples();
  readonly firstOverhead = new Samples();
  readonly delivery = new Samples();
  streams = 0;
  chunks = 0;
  #first = true;
  #sent = 0;

  start(): void {
    this.#sent = monoMs();
    this.#first = true;
  }

  /** One chunk's stamps (`bench_t0`, `bench_t`) and when it was read. */
  chunk(json: string, read: number): void {
    const t = /"bench_t0":([\d.]+),"bench_t":([\d.]+)/.exec(json);
    if (!t) return;
    const stamped = Number(t[2]);
    this.chunks++;
    if (this.#first) {
      this.#first = false;
      this.firstChunk.push(read - this.#sent);
      this.firstOverhead.push(read - this.#sent - (stamped - Number(t[1])));
    } else {
      this.delivery.push(read - stamped);
    }
  }

  stats(): PathStats {
    const pair = (s: Samples) => {
      const [p50, p99] = s.percentiles(50, 99);
      return { p50: p50!, p99: p99! };
    };
    return {
      streams: this.streams,
      chunks: this.chunks,
      firstChunkMs: pair(this.firstChunk),
      firstChunkOverheadMs: pair(this.firstOverhead),
      deliveryMs: pair(this.delivery),
    };
  }
}

/** One SSE stream through the chat adapter, recorded as it is read. */
function readSseStream(agent: http.Agent, url: URL, body: string, recorder: Recorder): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}`, 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`adapter stream answered ${res.statusCode}`));
      }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        const read = monoMs();
        buffer += text;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (event.startsWith('data: {')) recorder.chunk(event, read);
        }
      });
      res.on('end', () => {
        recorder.streams++;
        resolve();
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    recorder.start();
    req.end(body);
  });
}

async function readGrpcStream(client: GateClient, data: string, config: string, recorder: Recorder): Promise<void> {
  recorder.start();
  for await (const response of client.processResponseStream({ predict: { data: { json: data }, config: { json: config } } }, { account: 'bench', model: 'ticker' })) {
    const read = monoMs();
    const json = response.partialPredict?.data?.json ?? response.predict?.data?.json;
    if (json) recorder.chunk(json, read);
  }
  recorder.streams++;
}

/** `loops` loops of `one()` each until `durationSec` has passed, all into one recorder. */
async function readFor(durationSec: number, loops: number, one: (recorder: Recorder) => Promise<void>): Promise<Recorder> {
  const until = monoMs() + durationSec * 1000;
  const merged = new Recorder();
  await Promise.all(Array.from({ length: loops }, async () => {
    const recorder = new Recorder();
    while (monoMs() < until) await one(recorder);
    merged.streams += recorder.streams;
    merged.chunks += recorder.chunks;
    for (const [from, to] of [[recorder.firstChunk, merged.firstChunk], [recorder.firstOverhead, merged.firstOverhead], [recorder.delivery, merged.delivery]] as const) {
      for (const v of from.values()) to.push(v);
    }
  }));
  return merged;
}

export async function runStreaming(systems: Systems, options: StreamingOptions): Promise<StreamingResult> {
  const [{ httpUrl, grpcAddress }] = await Promise.all([systems.gatewayUrls(), systems.ticker('ticker', options.intervalMs, options.chunks)]);
  const perPath = Math.max(1, Math.floor(options.concurrency / 2));
  const agent = new http.Agent({ keepAlive: true, maxSockets: perPath });
  const client = new GateClient({ address: grpcAddress, authToken: BENCH_KEY });
  try {
    const url = new URL(`${httpUrl}/api/adapters/chatapi/v1/chat/completions`);
    const body = JSON.stringify(chatRequest('bench/ticker', { stream: true }));
    const request = chatRequest('bench/ticker');
    const data = JSON.stringify({ model: 'bench-1', messages: request.messages, stream: true });
    const config = JSON.stringify({ temperature: request.temperature, top_p: request.top_p, max_tokens: request.max_tokens });
    const both = (sec: number) => Promise.all([
      readFor(sec, perPath, (r) => readSseStream(agent, url, body, r)),
      readFor(sec, perPath, (r) => readGrpcStream(client, data, config, r)),
    ]);
    await both(Math.min(1, options.durationSec)); // warm-up
    const rounds: StreamingResult['rounds'] = [];
    for (let round = 0; round < options.rounds; round++) {
      const [h, g] = await both(options.durationSec);
      const stats = { http: h.stats(), grpc: g.stats() };
      rounds.push(stats);
      for (const path of ['http', 'grpc'] as const) {
        const s = stats[path];
        options.log(`  streaming round ${round + 1} ${path.padEnd(4)} ${s.streams} streams, ${s.chunks} chunks: first-chunk overhead p50 ${s.firstChunkOverheadMs.p50.toFixed(3)} p99 ${s.firstChunkOverheadMs.p99.toFixed(3)} ms; delivery p50 ${s.deliveryMs.p50.toFixed(3)} p99 ${s.deliveryMs.p99.toFixed(3)} ms`);
      }
    }
    const of = (pick: (r: { http: PathStats; grpc: PathStats }) => number) => spread(rounds.map(pick));
    const quad = (value: (r: { http: PathStats; grpc: PathStats }, key: 'firstChunkOverheadMs' | 'deliveryMs', p: 'p50' | 'p99') => number): Quad => ({
      firstChunkOverheadP50: of((r) => value(r, 'firstChunkOverheadMs', 'p50')),
      firstChunkOverheadP99: of((r) => value(r, 'firstChunkOverheadMs', 'p99')),
      deliveryP50: of((r) => value(r, 'deliveryMs', 'p50')),
      deliveryP99: of((r) => value(r, 'deliveryMs', 'p99')),
    });
    const { log: _log, ...settings } = options;
    return {
      settings,
      rounds,
      summary: {
        http: quad((r, k, p) => r.http[k][p]),
        grpc: quad((r, k, p) => r.grpc[k][p]),
        adapter: quad((r, k, p) => r.http[k][p] - r.grpc[k][p]),
      },
    };
  } finally {
    agent.destroy();
    client.close();
  }
}
