/**
 * Scenario 5: what the gateway and its chat adapter add to a stream. A ticker service (its own
 * process) answers each request with `chunks` chunks, one every `intervalMs`, each stamped with the
 * machine's monotonic clock as it is written. The same ticks are read four ways at the same time,
 * a quarter of the readers each:
 *
 * - http: the standard chat adapter (SSE), what an OpenAI client sees;
 * - grpc: `Gate.processResponseStream` with the SDK's GateClient, the gateway without the adapter;
 * - direct: SSE straight from the ticker process over plain HTTP, no gateway: the baseline;
 * - relay: the direct stream through a bare Node pass-through proxy: what one more process on the
 *   path costs on this machine before any gateway logic.
 *
 * Then, in each round's second sub-run, two more at the same time, as many readers each:
 *
 * - litellm: LiteLLM's proxy (bench/peers/litellm.ts) with the direct stream as its OpenAI upstream
 *   (`bench/ticker`, api_base the ticker's direct port); it asks for `stream: true` and re-sends each
 *   chunk as it arrives, re-serialized (the stamps travel in the content text, see STAMPS);
 * - litellmBaseline: the direct stream again, LiteLLM's baseline under the same load.
 *
 * LiteLLM has a sub-run of its own because it is CPU-heavy: about 20 ms of CPU per stream
 * (litellm 1.106.2, one worker), 0.8 of a core at three streams at once, which on a 2-core machine
 * would take CPU from the other paths' processes and move our figures. Its own baseline read beside
 * it carries whatever it costs the machine, so litellm − litellmBaseline is what LiteLLM adds.
 *
 * Portkey is not a path: 1.15.2 answers every streamed request to a custom host with a 500 on Node
 * ("TypeError: immutable" appending its headers to the upstream response).
 *
 * For each path, against the service's own stamps:
 * - first-chunk overhead = (first chunk read − request sent) − (first chunk stamped − request reached the service);
 * - chunk delivery = chunk read − chunk stamped, for every later chunk: what the path adds between chunks.
 * All paths of a sub-run share the service and the machine's load at that moment, so what a path
 * adds is its figure minus its sub-run's direct figure, percentile by percentile, in each round.
 */
import http from 'node:http';
import { BENCH_KEY, chatRequest, gatewayHeaders } from '../lib/config.js';
import { Samples, spread, type Spread } from '../lib/stats.js';
import type { Systems } from '../lib/systems.js';
import { STAMPS, monoMs } from '../lib/ticker.js';
import { litellmHeaders, type LiteLlmSettings } from '../peers/litellm.js';
import { GateClient } from '../../sdk/index.js';

export interface StreamingOptions {
  rounds: number;
  /** Reading time of each sub-run per round (its paths at once). */
  durationSec: number;
  /** Streams read at the same time, split evenly over our sub-run's four paths (LiteLLM's paths get as many each). */
  concurrency: number;
  chunks: number;
  intervalMs: number;
  /** Whether LiteLLM's sub-run takes part (BenchOptions.withLiteLlm). */
  withLiteLlm: boolean;
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

/** Read together in each round's first sub-run. */
const OUR_PATHS = ['http', 'grpc', 'direct', 'relay'] as const;
/** Read together in each round's second sub-run: LiteLLM and its own direct baseline. */
const PEER_PATHS = ['litellm', 'litellmBaseline'] as const;
export const STREAM_PATHS = [...OUR_PATHS, ...PEER_PATHS] as const;
export type StreamPath = (typeof STREAM_PATHS)[number];
type Round = Record<StreamPath, PathStats>;

/** Differences of paths reported per round: [minuend, subtrahend]. */
export const STREAM_DIFFERENCES = {
  /** What the gateway with its chat adapter adds to the stream: the target's figure. */
  gatewayAdded: ['http', 'direct'],
  /** What the bare pass-through hop adds. */
  relayAdded: ['relay', 'direct'],
  /** What the gateway adds beyond the bare hop. */
  gatewayOverRelay: ['http', 'relay'],
  /** The chat adapter's own share (SSE against the gateway's gRPC streaming call). */
  adapterShare: ['http', 'grpc'],
  /** What LiteLLM adds, against the direct stream read beside it. */
  litellmAdded: ['litellm', 'litellmBaseline'],
} as const satisfies Record<string, readonly [StreamPath, StreamPath]>;

export interface StreamingResult {
  settings: Omit<StreamingOptions, 'log'> & { litellm?: LiteLlmSettings };
  rounds: Round[];
  /** LiteLLM's CPU time per stream in each round's sub-run (why it has one). */
  litellmCpuMsPerStream: Spread;
  summary: Record<StreamPath | keyof typeof STREAM_DIFFERENCES, Quad>;
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
    const t = STAMPS.exec(json);
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

/** One SSE stream (chat adapter, ticker, relay or peer), recorded as it is read. */
function readSseStream(agent: http.Agent, url: URL, headers: Record<string, string>, body: string, recorder: Recorder): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`${url.host} stream answered ${res.statusCode}`));
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
  for await (const response of client.processResponseStream(
    { predict: { data: { json: data }, config: { json: config } } },
    { account: 'bench', model: 'ticker' },
  )) {
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
  await Promise.all(
    Array.from({ length: loops }, async () => {
      const recorder = new Recorder();
      while (monoMs() < until) await one(recorder);
      merged.streams += recorder.streams;
      merged.chunks += recorder.chunks;
      for (const [from, to] of [
        [recorder.firstChunk, merged.firstChunk],
        [recorder.firstOverhead, merged.firstOverhead],
        [recorder.delivery, merged.delivery],
      ] as const) {
        for (const v of from.values()) to.push(v);
      }
    }),
  );
  return merged;
}

export async function runStreaming(systems: Systems, options: StreamingOptions): Promise<StreamingResult> {
  const [{ httpUrl, grpcAddress }, ticker] = await Promise.all([
    systems.gatewayUrls(),
    systems.ticker('ticker', options.intervalMs, options.chunks),
  ]);
  const directPort = ticker.ready.directPort as number;
  const [relay, litellm] = await Promise.all([
    systems.relay(directPort),
    options.withLiteLlm ? systems.litellmTicker(directPort) : undefined,
  ]);
  // Without LiteLLM, only our sub-run: its paths and differences are left out of the rounds and the summary.
  const paths = litellm ? STREAM_PATHS : OUR_PATHS;
  const perPath = Math.max(1, Math.floor(options.concurrency / OUR_PATHS.length));
  const agents: http.Agent[] = [];
  const agent = () => {
    agents.push(new http.Agent({ keepAlive: true, maxSockets: perPath }));
    return agents.at(-1)!;
  };
  const client = new GateClient({ address: grpcAddress, authToken: BENCH_KEY });
  try {
    const body = JSON.stringify(chatRequest('bench/ticker', { stream: true }));
    const request = chatRequest('bench/ticker');
    const data = JSON.stringify({ model: 'bench-1', messages: request.messages, stream: true });
    const config = JSON.stringify({ temperature: request.temperature, top_p: request.top_p, max_tokens: request.max_tokens });
    const sse = (url: string, headers = gatewayHeaders()) => {
      const target = new URL(url);
      const pool = agent();
      return (r: Recorder) => readSseStream(pool, target, headers, body, r);
    };
    const direct = `http://127.0.0.1:${directPort}/v1/chat/completions`;
    const readers: Partial<Record<StreamPath, (r: Recorder) => Promise<void>>> = {
      http: sse(`${httpUrl}/api/adapters/chatapi/v1/chat/completions`),
      grpc: (r) => readGrpcStream(client, data, config, r),
      direct: sse(direct),
      relay: sse(`http://127.0.0.1:${relay.ready.port as number}/v1/chat/completions`),
      ...(litellm && {
        // LiteLLM serves the ticker as `bench/ticker` too, so the body is the same; only the key differs.
        litellm: sse(`http://127.0.0.1:${litellm.ready.port as number}/v1/chat/completions`, litellmHeaders()),
        litellmBaseline: sse(direct),
      }),
    };
    const together = async (paths: readonly StreamPath[], sec: number): Promise<Partial<Round>> => {
      const recorders = await Promise.all(paths.map((path) => readFor(sec, perPath, readers[path]!)));
      return Object.fromEntries(paths.map((path, i) => [path, recorders[i]!.stats()]));
    };
    // LiteLLM's CPU time per stream in its sub-run: the reason it has one.
    const cpuPerStream: number[] = [];
    const round = async (sec: number): Promise<Round> => {
      const ours = await together(OUR_PATHS, sec);
      if (!litellm) return ours as Round;
      const cpuBefore = litellm.cpuMs();
      const peer = await together(PEER_PATHS, sec);
      cpuPerStream.push((litellm.cpuMs() - cpuBefore) / Math.max(1, peer.litellm!.streams));
      return { ...ours, ...peer } as Round;
    };
    await round(Math.min(1, options.durationSec)); // warm-up
    cpuPerStream.length = 0;
    const rounds: Round[] = [];
    for (let r = 0; r < options.rounds; r++) {
      const stats = await round(options.durationSec);
      rounds.push(stats);
      for (const path of paths) {
        const s = stats[path];
        options.log(
          `  streaming round ${r + 1} ${path.padEnd(15)} ${s.streams} streams, ${s.chunks} chunks: first-chunk overhead p50 ${s.firstChunkOverheadMs.p50.toFixed(3)} p99 ${s.firstChunkOverheadMs.p99.toFixed(3)} ms; delivery p50 ${s.deliveryMs.p50.toFixed(3)} p99 ${s.deliveryMs.p99.toFixed(3)} ms`,
        );
      }
      if (litellm) options.log(`  streaming round ${r + 1} litellm used ${cpuPerStream.at(-1)!.toFixed(1)} ms CPU per stream`);
    }
    const quad = (value: (r: Round, key: 'firstChunkOverheadMs' | 'deliveryMs', p: 'p50' | 'p99') => number): Quad => {
      const of = (key: 'firstChunkOverheadMs' | 'deliveryMs', p: 'p50' | 'p99') => spread(rounds.map((r) => value(r, key, p)));
      return {
        firstChunkOverheadP50: of('firstChunkOverheadMs', 'p50'),
        firstChunkOverheadP99: of('firstChunkOverheadMs', 'p99'),
        deliveryP50: of('deliveryMs', 'p50'),
        deliveryP99: of('deliveryMs', 'p99'),
      };
    };
    const summary = {} as StreamingResult['summary'];
    for (const path of paths) summary[path] = quad((r, k, p) => r[path][k][p]);
    for (const [name, [a, b]] of Object.entries(STREAM_DIFFERENCES)) {
      if (!(paths as readonly string[]).includes(a) || !(paths as readonly string[]).includes(b)) continue;
      summary[name as keyof typeof STREAM_DIFFERENCES] = quad((r, k, p) => r[a][k][p] - r[b][k][p]);
    }
    const { log: _log, ...settings } = options;
    const litellmSettings = litellm ? { litellm: litellm.ready.settings as LiteLlmSettings } : {};
    return { settings: { ...settings, ...litellmSettings }, rounds, summary, litellmCpuMsPerStream: spread(cpuPerStream) };
  } finally {
    for (const pool of agents) pool.destroy();
    client.close();
  }
}
