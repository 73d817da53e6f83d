/**
 * Scenario 5: what the gateway adds to a stream. A ticker service (raw Gate protocol, in this
 * process, so that its clock is the reader's clock) answers each request with `chunks` chunks, one
 * every `intervalMs`, each stamped with the time it was written to the gRPC stream. The same stream
 * is read two ways through the gateway, alternating:
 *
 * - http: the standard chat adapter (SSE), what an OpenAI client sees;
 * - grpc: `Gate.processResponseStream` with the SDK's GateClient, the gateway without the adapter.
 *
 * For each path:
 * - first-chunk overhead = (first chunk read − request sent) − (first chunk stamped − request reached the service);
 * - chunk delivery = chunk read − chunk stamped, for every later chunk: what the path adds between chunks;
 * - gap change = (gap between two chunks as read) − (gap as stamped).
 * The adapter's own part is http − grpc.
 */
import http from 'node:http';
import { BENCH_KEY, TOKENS, chatRequest } from '../lib/config.js';
import { Samples, spread, type Spread } from '../lib/stats.js';
import type { Systems } from '../lib/systems.js';
import { startTicker } from '../lib/ticker.js';
import { GateClient } from '../../sdk/index.js';

export interface StreamingOptions {
  rounds: number;
  /** Reading time per path per round. */
  durationSec: number;
  /** Streams read at the same time. */
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
  gapChangeMs: { p50: number; p99: number };
}

export interface StreamingResult {
  settings: Omit<StreamingOptions, 'log'>;
  rounds: { http: PathStats; grpc: PathStats }[];
  summary: {
    http: { firstChunkOverheadP99: Spread; deliveryP99: Spread; firstChunkOverheadP50: Spread; deliveryP50: Spread };
    grpc: { firstChunkOverheadP99: Spread; deliveryP99: Spread; firstChunkOverheadP50: Spread; deliveryP50: Spread };
    /** http − grpc per round: the adapter's own share. */
    adapter: { firstChunkOverheadP99: Spread; deliveryP99: Spread; firstChunkOverheadP50: Spread; deliveryP50: Spread };
  };
}

class Recorder {
  readonly firstChunk = new Samples();
  readonly firstOverhead = new Samples();
  readonly delivery = new Samples();
  readonly gapChange = new Samples();
  streams = 0;
  chunks = 0;
  #previous: { read: number; stamped: number } | undefined;
  #sent = 0;

  start(sent: number): void {
    this.#sent = sent;
    this.#previous = undefined;
  }

  /** One chunk's stamps (`bench_t0`, `bench_t`) and when it was read. */
  chunk(json: string, read: number): void {
    const t = /"bench_t0":([\d.]+),"bench_t":([\d.]+)/.exec(json);
    if (!t) return;
    const t0 = Number(t[1]);
    const stamped = Number(t[2]);
    this.chunks++;
    if (!this.#previous) {
      this.firstChunk.push(read - this.#sent);
      this.firstOverhead.push(read - this.#sent - (stamped - t0));
    } else {
      this.delivery.push(read - stamped);
      this.gapChange.push(read - this.#previous.read - (stamped - this.#previous.stamped));
    }
    this.#previous = { read, stamped };
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
      gapChangeMs: pair(this.gapChange),
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
        const read = performance.now();
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
    recorder.start(performance.now());
    req.end(body);
  });
}

async function readGrpcStream(client: GateClient, data: string, config: string, recorder: Recorder): Promise<void> {
  recorder.start(performance.now());
  for await (const response of client.processResponseStream({ predict: { data: { json: data }, config: { json: config } } }, { account: 'bench', model: 'ticker' })) {
    const read = performance.now();
    const json = response.partialPredict?.data?.json ?? response.predict?.data?.json;
    if (json) recorder.chunk(json, read);
  }
  recorder.streams++;
}

/** Runs `concurrency` loops of `one()` until `durationSec` has passed; each loop records its own streams. */
async function loops(durationSec: number, concurrency: number, one: (recorder: Recorder) => Promise<void>): Promise<PathStats> {
  const recorders = Array.from({ length: concurrency }, () => new Recorder());
  const until = performance.now() + durationSec * 1000;
  await Promise.all(recorders.map(async (recorder) => {
    while (performance.now() < until) await one(recorder);
  }));
  // Merge: every loop recorded into its own recorder (one stream at a time each).
  const merged = new Recorder();
  for (const r of recorders) {
    merged.streams += r.streams;
    merged.chunks += r.chunks;
    for (const [from, to] of [[r.firstChunk, merged.firstChunk], [r.firstOverhead, merged.firstOverhead], [r.delivery, merged.delivery], [r.gapChange, merged.gapChange]] as const) {
      for (const v of from.values()) to.push(v);
    }
  }
  return merged.stats();
}

export async function runStreaming(systems: Systems, options: StreamingOptions): Promise<StreamingResult> {
  const { httpUrl, grpcAddress } = await systems.gatewayUrls();
  const ticker = await startTicker({ address: grpcAddress, token: TOKENS.ticker, intervalMs: options.intervalMs, chunks: options.chunks });
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const client = new GateClient({ address: grpcAddress, authToken: BENCH_KEY });
  try {
    await systems.waitForService('ticker');
    const url = new URL(`${httpUrl}/api/adapters/chatapi/v1/chat/completions`);
    const body = JSON.stringify(chatRequest('bench/ticker', { stream: true }));
    const request = chatRequest('bench/ticker');
    const data = JSON.stringify({ model: 'bench-1', messages: request.messages, stream: true });
    const config = JSON.stringify({ temperature: request.temperature, top_p: request.top_p, max_tokens: request.max_tokens });
    const paths = {
      http: (r: Recorder) => readSseStream(agent, url, body, r),
      grpc: (r: Recorder) => readGrpcStream(client, data, config, r),
    };
    // Warm-up of both paths.
    await loops(Math.min(1, options.durationSec), options.concurrency, paths.http);
    await loops(Math.min(1, options.durationSec), options.concurrency, paths.grpc);
    const rounds: StreamingResult['rounds'] = [];
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? (['http', 'grpc'] as const) : (['grpc', 'http'] as const);
      const stats = {} as { http: PathStats; grpc: PathStats };
      for (const path of order) {
        stats[path] = await loops(options.durationSec, options.concurrency, paths[path]);
        const s = stats[path];
        options.log(`  streaming round ${round + 1} ${path.padEnd(4)} ${s.streams} streams, ${s.chunks} chunks: first-chunk overhead p50 ${s.firstChunkOverheadMs.p50.toFixed(3)} p99 ${s.firstChunkOverheadMs.p99.toFixed(3)} ms; delivery p50 ${s.deliveryMs.p50.toFixed(3)} p99 ${s.deliveryMs.p99.toFixed(3)} ms`);
      }
      rounds.push(stats);
    }
    const of = (pick: (r: { http: PathStats; grpc: PathStats }) => number) => spread(rounds.map(pick));
    const block = (path: 'http' | 'grpc') => ({
      firstChunkOverheadP50: of((r) => r[path].firstChunkOverheadMs.p50),
      firstChunkOverheadP99: of((r) => r[path].firstChunkOverheadMs.p99),
      deliveryP50: of((r) => r[path].deliveryMs.p50),
      deliveryP99: of((r) => r[path].deliveryMs.p99),
    });
    const { log: _log, ...settings } = options;
    return {
      settings,
      rounds,
      summary: {
        http: block('http'),
        grpc: block('grpc'),
        adapter: {
          firstChunkOverheadP50: of((r) => r.http.firstChunkOverheadMs.p50 - r.grpc.firstChunkOverheadMs.p50),
          firstChunkOverheadP99: of((r) => r.http.firstChunkOverheadMs.p99 - r.grpc.firstChunkOverheadMs.p99),
          deliveryP50: of((r) => r.http.deliveryMs.p50 - r.grpc.deliveryMs.p50),
          deliveryP99: of((r) => r.http.deliveryMs.p99 - r.grpc.deliveryMs.p99),
        },
      },
    };
  } finally {
    agent.destroy();
    client.close();
    ticker.close();
  }
}
