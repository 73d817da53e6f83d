import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { OTHER_ACCOUNT_KEY, TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { stallAgainstBaseline } from '../support/victim-latency.js';

const BASE = '/api/adapters/chatapi/v1';
/** Near the default HTTP body limit (32 MiB): what one caller may send. */
const BODY_BYTES = 30 * 2 ** 20;

/** A JSON array of `item` repeated to about `bytes`, built as text (building objects here would stall the in-process gateway). */
const repeated = (item: string, bytes: number) =>
  `[${Array(Math.floor(bytes / (item.length + 1)))
    .fill(item)
    .join(',')}]`;

/**
 * #25 N1, the sweep: every map and repeated field a caller controls over HTTP is parsed by the one
 * JSON reader (core/validation/json.ts), which counts objects, arrays and object members before
 * JSON.parse builds any and refuses more than `limits.jsonMaxMembers` (100,000) of them, or more than
 * `limits.jsonMaxArrayItems` (1,000,000) array items, with 413 JSON_TOO_MANY_MEMBERS. The attacker, an
 * authenticated key of `demo`, sends one body near the 32 MiB limit made of small items in the field
 * under test: ~1,000,000 objects, or 10-15 million strings or numbers (before the bound: seconds of
 * JSON.parse and validation on the event loop for each; with the bound lifted, each of the four
 * stalled the gateway long enough that the echo service was dropped). Another account's chat call while it runs is
 * compared with the same measure while a harmless body of the same size (one long string) is refused
 * for an unknown model.
 */
describe('caller-controlled collections are bounded before they are built (#25 N1)', () => {
  let gw: TestGateway;
  let echo: ModelService;

  const shapes = {
    'Responses input items': {
      path: 'responses',
      body: (items: string) => `{"model":"demo/echo","input":${items}}`,
      item: '{"type":"message","role":"user","content":"x"}',
    },
    'Messages content blocks': {
      path: 'messages',
      body: (items: string) => `{"model":"demo/echo","max_tokens":8,"messages":[{"role":"user","content":${items}}]}`,
      item: '{"type":"text","text":"x"}',
    },
    'chat tools': {
      path: 'chat/completions',
      body: (items: string) => `{"model":"demo/echo","messages":[{"role":"user","content":"hi"}],"tools":${items}}`,
      item: '{"type":"function","function":{"name":"f"}}',
    },
    'embeddings numbers': { path: 'embeddings', body: (items: string) => `{"model":"demo/echo","input":${items}}`, item: '1' },
    'embeddings strings': { path: 'embeddings', body: (items: string) => `{"model":"demo/echo","input":${items}}`, item: '"a"' },
    'chat messages': {
      path: 'chat/completions',
      body: (items: string) => `{"model":"demo/echo","messages":${items}}`,
      item: '{"role":"user","content":"x"}',
    },
  } as const;
  const bodies = new Map<string, { attack: string; sameBytes: string }>();

  beforeAll(async () => {
    for (const [name, shape] of Object.entries(shapes)) {
      const attack = shape.body(repeated(shape.item, BODY_BYTES));
      const sameBytes = shape.body(`["${'x'.repeat(BODY_BYTES)}"]`).replace('demo/echo', 'demo/no-such-service');
      bodies.set(name, { attack, sameBytes });
    }
    // Each attack here is a 30 MB body from one account; the per-account input rate (8 MiB/s, tested
    // in account-input-rate.test.ts) would make every test wait out the previous one's bytes first.
    // What this file checks is the bound on collections, so the rate is lifted.
    const input = chatConfigInput();
    input.limits = { ...input.limits, inputBytesPerSecondPerAccount: 1024 * 1024 * 1024 };
    gw = await startTestGateway(input);
    echo = startEchoService({ gateways: gw.grpcAddress, connectionToken: CHAT_TOKENS.echo, logger: silentLogger });
    await echo.ready();
    await eventually(async () => (await chat(OTHER_ACCOUNT_KEY)).status === 200, 5000, 'demo/echo answering');
  }, 60_000);

  afterAll(async () => {
    await echo?.stop();
    await gw?.close();
  });

  const post = async (path: string, key: string, body: string) => {
    const res = await fetch(`${gw.httpUrl}${BASE}/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    return { status: res.status, text };
  };
  const chat = (key: string) => post('chat/completions', key, '{"model":"demo/echo","messages":[{"role":"user","content":"hi"}]}');
  const victim = async () => {
    const started = performance.now();
    const { status, text } = await chat(OTHER_ACCOUNT_KEY);
    expect(status, text).toBe(200);
    return performance.now() - started;
  };

  it.each(Object.keys(shapes))(
    '%s: 30 MB of small items is a 413 JSON_TOO_MANY_MEMBERS before it is parsed, and other accounts are served',
    async (name) => {
      const shape = shapes[name as keyof typeof shapes];
      const { attack, sameBytes } = bodies.get(name)!;
      const { baseline, attacked } = await stallAgainstBaseline(
        victim,
        () => post(shape.path, TEST_KEY, sameBytes),
        () => post(shape.path, TEST_KEY, attack),
        { factor: 4 },
      );
      expect(baseline.result.status, baseline.result.text.slice(0, 300)).toBeGreaterThanOrEqual(400);
      expect(attacked.result.status, attacked.result.text.slice(0, 300)).toBe(413);
      // The Messages routes answer in Anthropic's shape, with its type for a 413 and the catalog's message.
      expect(attacked.result.text).toMatch(
        shape.path === 'messages' ? /"request_too_large".*JSON objects, arrays and object members/ : /"JSON_TOO_MANY_MEMBERS"/,
      );
      console.log(
        `${name}: victim slowest ${attacked.slowestMs.toFixed(0)} ms vs ${baseline.slowestMs.toFixed(0)} ms for the same bytes in one string`,
      );
      expect(attacked.slowestMs).toBeLessThan(4 * baseline.slowestMs);
    },
    120_000,
  );
});
