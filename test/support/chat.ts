/** Config and helpers shared by the chat-adapter suites. */
import http from 'node:http';
import { testConfigInput } from './gateway.js';

export const CHAT_TOKENS = {
  echo: 'echo-service-token-0001',
  private: 'private-service-token-01',
  plain: 'plain-service-token-00001',
  faulty: 'faulty-service-token-0001',
} as const;

export const LIMITED_KEY = 'test-key-rate-limited-00000001';

/** The HTTP engines behind `demo/openai-proxy` and `demo/claude` (base URLs without `/v1`). */
export interface ChatEngines {
  openai: string;
  anthropic: string;
}

/** The engines' keys, read by the upstream connector from these variables. */
export const ENGINE_KEY_ENV = { openai: 'CHAT_TEST_OPENAI_ENGINE_KEY', anthropic: 'CHAT_TEST_ANTHROPIC_ENGINE_KEY' } as const;
export const ENGINE_KEYS = { openai: 'upstream-openai-key', anthropic: 'upstream-anthropic-key' } as const;

/**
 * The test config with both chat adapters enabled: `demo/echo` (public, OpenAI family, registry
 * provider `demo` with models echo-1 and echo-2), `demo/private`, `demo/openai-proxy`,
 * `demo/claude` (Anthropic family), `demo/plain` (no family) and `demo/faulty`; plus an account
 * limited to one request per second. Aliases: `echo`, `private-model`, `gpt-5-codex` (openai-proxy) and
 * `claude-sonnet-4-5` (claude). Given `engines`, `demo/openai-proxy` and `demo/claude` are
 * served by the built-in upstream connector (plugin `upstream`) in front of them; without, they have
 * no instance.
 */
export function chatConfigInput(pluginOptions: Record<string, unknown> = {}, engines?: ChatEngines): Record<string, any> {
  const upstream = (api: keyof ChatEngines, baseUrl: string, defaultModel: string) =>
    // passModels: the suites name the engines' models themselves (gpt-4o, claude-up…), as a service
    // that opts in to unmapped names lets them.
    engines ? { upstream: { api, baseUrl, apiKeyEnv: ENGINE_KEY_ENV[api], defaultModel, passModels: true } } : {};
  const input = testConfigInput({
    services: [
      {
        id: 10,
        name: 'echo',
        account: 'demo',
        public: true,
        family: 'openai',
        provider: 'demo',
        defaultModel: 'echo-1',
        aliases: ['echo'],
        connectionTokens: [{ token: CHAT_TOKENS.echo }],
      },
      {
        id: 11,
        name: 'private',
        account: 'demo',
        public: false,
        aliases: ['private-model'],
        connectionTokens: [{ token: CHAT_TOKENS.private }],
      },
      {
        id: 12,
        name: 'openai-proxy',
        account: 'demo',
        public: true,
        family: 'openai',
        aliases: ['gpt-5-codex'],
        ...upstream('openai', `${engines?.openai}/v1`, 'gpt-up-default'),
      },
      {
        id: 13,
        name: 'claude',
        account: 'demo',
        public: true,
        family: 'anthropic',
        aliases: ['claude-sonnet-4-5'],
        ...upstream('anthropic', `${engines?.anthropic}`, 'claude-default'),
      },
      { id: 14, name: 'plain', account: 'demo', public: true, connectionTokens: [{ token: CHAT_TOKENS.plain }] },
      { id: 15, name: 'faulty', account: 'demo', public: true, timeoutSec: 2, connectionTokens: [{ token: CHAT_TOKENS.faulty }] },
    ],
    registry: {
      providers: [{ name: 'demo', displayName: 'Demo' }],
      models: [
        {
          name: 'echo-1',
          providers: ['demo'],
          createdAt: '2026-01-01T00:00:00Z',
          parameters: {
            constants: [],
            variables: [
              { type: 'number', name: 'temperature', min: 0, max: 2 },
              { type: 'integer', name: 'max_tokens', min: 1, max: 4096 },
            ],
          },
        },
        { name: 'echo-2', providers: ['demo'], createdAt: '2026-02-01T00:00:00Z', parameters: { constants: [], variables: [] } },
      ],
    },
    plugins: { enabled: ['chatapi', 'chatapi-direct', ...(engines ? ['upstream'] : [])], options: pluginOptions },
  });
  input.accounts.push({ id: 5, name: 'limited', requestsPerSecond: 1 });
  input.apiKeys.push({ name: 'limited', account: 'limited', key: LIMITED_KEY, permissions: ['MODEL_REQUESTS'] });
  return input;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body exactly as received. */
  text: string;
}

/** One HTTP request with the raw body kept, for SSE framing checks. */
export function rawPost(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The `data:` payloads of an OpenAI-style SSE body; throws on any line that is not `data: …` or blank. */
export function sseData(text: string): string[] {
  if (!text.endsWith('\n\n')) throw new Error(`the stream does not end with a blank line: ${JSON.stringify(text.slice(-40))}`);
  return text
    .split('\n\n')
    .slice(0, -1)
    .map((block) => {
      if (!block.startsWith('data: ') || block.includes('\n')) throw new Error(`not a single data line: ${JSON.stringify(block)}`);
      return block.slice(6);
    });
}
