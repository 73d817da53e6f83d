/**
 * What every target of the benchmark is given: the gateway config, the one chat request, the one
 * answer body, and the headers. The fixed answer is the echo service's own answer to the request,
 * so the ceiling, the peer's mock upstream and the echo service all return the same bytes (up to
 * the digits of the echo's generated id).
 */
import { echoChat } from '../../examples/echo-service/echo.js';
import type { LoadTarget } from './load.js';

export const BENCH_KEY = 'bench-api-key-0123456789';
/** The authenticated attacker's key (account `mallory`) in the hostile scenario: another account than the one measured. */
export const ATTACKER_KEY = 'bench-attacker-key-0123456';
/**
 * The key of the hostile scenario's costliest-attack row (account `mallory-costliest`). An account of
 * its own: the rotating attacker's phase just before leaves `mallory` owing seconds of its input rate
 * (each refused flood is charged its announced rest at once), and the same account then spent about
 * a third of its next phase paying for it instead of attacking.
 */
export const COSTLIEST_ATTACKER_KEY = 'bench-costliest-key-0123456';
/** The bearer token a bench gateway with the `metrics` plugin wants on a scrape (/metrics is never open). */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';
/**
 * Row 3c's key: one of the 100,000 stored user-space keys its gateway is seeded with (bench/servers/gateway.mjs),
 * with budgets of its own; its account has budgets too.
 */
export const BENCH_USERSPACE_KEY = 'bench-userspace-key-0123456789';
/** How many stored keys row 3c's gateway holds. */
export const BENCH_USERSPACE_KEYS = 100_000;
export const TOKENS = {
  echo: 'bench-echo-token-000001',
  slow: 'bench-slow-token-000001',
  ticker: 'bench-ticker-token-0001',
} as const;

/** The registry model every chat request is checked against: the usual OpenAI sampling knobs. */
const BENCH_MODEL = {
  name: 'bench-1',
  providers: ['bench'],
  createdAt: '2026-01-01T00:00:00Z',
  parameters: {
    constants: [{ type: 'integer', name: 'contextWindow', value: 32768 }],
    variables: [
      { type: 'number', name: 'temperature', min: 0, max: 2, default: 1 },
      { type: 'number', name: 'top_p', min: 0, max: 1, default: 1 },
      { type: 'integer', name: 'max_tokens', min: 1, max: 32768 },
      { type: 'integer', name: 'max_completion_tokens', min: 1, max: 32768 },
      { type: 'number', name: 'presence_penalty', min: -2, max: 2, default: 0 },
      { type: 'number', name: 'frequency_penalty', min: -2, max: 2, default: 0 },
      { type: 'integer', name: 'n', min: 1, max: 8, default: 1 },
      { type: 'integer', name: 'seed', min: 0, max: 2147483647 },
      { type: 'string', name: 'user', maxLength: 256 },
      { type: 'enum', name: 'reasoning_effort', values: ['low', 'medium', 'high'] },
    ],
  },
};

// Plus `upstream`, for the one-process path (the connector calling the mock upstream itself).
/** Copied into each config: the scenarios add to their copy (the 3b row adds metrics). */
const DEMO_PLUGINS = [
  'health',
  'specs',
  'model-registry',
  'sync-predict',
  'chatapi',
  'chatapi-direct',
  'fitting',
  'audio-speech',
  'audio-transcriptions',
  'upstream',
];

/**
 * The gateway config of the benchmark (what `buildConfig` takes). `upstreamUrl`: the mock upstream,
 * which `bench/direct` (the built-in upstream connector, no service process) calls.
 */
export function benchConfigInput(upstreamUrl?: string): Record<string, unknown> {
  const service = (id: number, name: string, token: string) => ({
    id,
    name,
    account: 'bench',
    public: true,
    family: 'openai',
    provider: 'bench',
    defaultModel: 'bench-1',
    connectionTokens: [{ token }],
  });
  return {
    server: { host: '127.0.0.1', httpPort: 0, grpcPort: 0 },
    // No per-account rate limit in the way of a load test: the limiter still runs on every request.
    accounts: [
      { id: 1, name: 'bench', requestsPerSecond: 1_000_000_000 },
      { id: 2, name: 'mallory', requestsPerSecond: 1_000_000_000 },
      { id: 3, name: 'mallory-costliest', requestsPerSecond: 1_000_000_000 },
    ],
    // Nor the per-account stream quota (default 32): the streaming scenario holds many gRPC streams.
    limits: { concurrentStreamsPerAccount: 1_000_000 },
    apiKeys: [
      { name: 'bench-key', account: 'bench', key: BENCH_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA'] },
      { name: 'attacker-key', account: 'mallory', key: ATTACKER_KEY, permissions: ['MODEL_REQUESTS'] },
      { name: 'costliest-attacker-key', account: 'mallory-costliest', key: COSTLIEST_ATTACKER_KEY, permissions: ['MODEL_REQUESTS'] },
    ],
    services: [
      service(1, 'echo', TOKENS.echo),
      service(3, 'slow', TOKENS.slow),
      service(4, 'ticker', TOKENS.ticker),
      ...(upstreamUrl
        ? [
            {
              id: 5,
              name: 'direct',
              account: 'bench',
              public: true,
              family: 'openai',
              provider: 'bench',
              defaultModel: 'bench-1',
              upstream: { api: 'openai', baseUrl: `${upstreamUrl}/v1`, defaultModel: 'bench-1', maxConcurrency: 64 },
            },
          ]
        : []),
    ],
    registry: { providers: [{ name: 'bench', displayName: 'Bench' }], models: [BENCH_MODEL] },
    // The plugins of the demo config (every built-in HTTP interface), so a chat request passes the
    // routers of the others as it would in a default deployment.
    plugins: { enabled: [...DEMO_PLUGINS] },
  };
}

const USER_TEXT =
  'Summarise in two sentences why request validation belongs in the gateway rather than in every model service, ' +
  'and name one thing that should stay in the service.';

/** The chat request of the HTTP scenarios (model: `bench/echo` or `bench/direct`). */
export function chatRequest(model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model,
    messages: [
      { role: 'system', content: 'You are a concise assistant.' },
      { role: 'user', content: USER_TEXT },
    ],
    temperature: 0.7,
    top_p: 0.95,
    max_tokens: 256,
    ...extra,
  };
}

/** The fixed answer: what the echo service answers to chatRequest() with the forwarded model. */
export function fixedAnswer(): string {
  const request = chatRequest('bench-1');
  return JSON.stringify(echoChat({ model: 'bench-1', messages: request.messages as unknown[] }));
}

/**
 * Headers sent to every HTTP target alike: the peer needs its provider and upstream headers, our
 * gateway needs the key (the peer forwards it to the mock, which ignores it); each side ignores the
 * others' headers.
 */
export function requestHeaders(upstreamPort: number): Record<string, string> {
  return {
    ...gatewayHeaders(),
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `http://127.0.0.1:${upstreamPort}/v1`,
  };
}

/** What our gateway alone needs: the JSON content type and the bench key. */
export function gatewayHeaders(): Record<string, string> {
  return { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` };
}

/** The chat request to `model` (default `bench/echo`) through our chat adapter at `httpUrl`, with our key. */
export function gatewayChatLoad(httpUrl: string, model = 'bench/echo'): LoadTarget {
  const body = JSON.stringify(chatRequest(model));
  return { url: `${httpUrl}/api/adapters/chatapi/v1/chat/completions`, requests: [{ method: 'POST', headers: gatewayHeaders(), body }] };
}
