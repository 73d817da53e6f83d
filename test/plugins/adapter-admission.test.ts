/**
 * Every adapter route admits a request through core's one admission (`ctx.admission.request` over the
 * Pipeline's checks), so each answers the same stages in the same order: key (401), blocked account
 * (402), permission (403), rate (429) before the body is read; the body's check (400) before the
 * service it names is resolved; an unknown model and another account's private service alike 404.
 * Real gateway on loopback, real HTTP requests; no service needs to be connected, since every request
 * here is refused before a call would be opened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCKED_KEY, OTHER_ACCOUNT_KEY, READ_ONLY_KEY, TEST_KEY, startTestGateway, type TestGateway } from '../support/gateway.js';
import { LIMITED_KEY, chatConfigInput } from '../support/chat.js';

type Body = string | FormData;

interface AdapterRoute {
  path: string;
  /** A body that passes the route's check, naming `model`. */
  valid(model: string): Body;
  /** A body the route's check refuses with 400. */
  invalid(): Body;
}

const messages = [{ role: 'user', content: 'hello' }];
const json = (body: Record<string, unknown>) => JSON.stringify(body);
const MALFORMED = '{"model":';

const ROUTES: AdapterRoute[] = [
  { path: '/api/adapters/chatapi/chat/completions', valid: (model) => json({ model, messages }), invalid: () => MALFORMED },
  { path: '/api/adapters/chatapi/completions', valid: (model) => json({ model, prompt: 'hello' }), invalid: () => MALFORMED },
  { path: '/api/adapters/chatapi/embeddings', valid: (model) => json({ model, input: 'hello' }), invalid: () => MALFORMED },
  { path: '/api/adapters/chatapi/responses', valid: (model) => json({ model, input: 'hello' }), invalid: () => MALFORMED },
  { path: '/api/adapters/chatapi/v1/messages', valid: (model) => json({ model, max_tokens: 16, messages }), invalid: () => MALFORMED },
  { path: '/api/adapters/chatapi/v1/messages/count_tokens', valid: (model) => json({ model, messages }), invalid: () => MALFORMED },
  { path: '/api/adapters/chatapi-direct/chat/completions', valid: (model) => json({ model, messages }), invalid: () => MALFORMED },
  {
    path: '/api/adapters/chatapi-direct/v1/messages',
    valid: (model) => json({ model, max_tokens: 16, messages }),
    invalid: () => MALFORMED,
  },
  { path: '/api/adapters/chatapi-direct/v1/messages/count_tokens', valid: (model) => json({ model, messages }), invalid: () => MALFORMED },
  { path: '/api/adapters/chatapi/audio/speech', valid: (model) => json({ model, input: 'hello' }), invalid: () => MALFORMED },
  {
    path: '/api/adapters/chatapi/audio/transcriptions',
    valid: (model) => form({ model, file: true }),
    // No file part: the multipart check's 400.
    invalid: () => form({ model: 'demo/echo', file: false }),
  },
];

function form({ model, file }: { model: string; file: boolean }): FormData {
  const data = new FormData();
  data.set('model', model);
  if (file) data.set('file', new Blob([new Uint8Array([1, 2, 3, 4])]), 'a.wav');
  return data;
}

describe('every adapter route admits through the one admission', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    const input = chatConfigInput();
    input.plugins.enabled.push('audio-speech', 'audio-transcriptions');
    gw = await startTestGateway(input);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const post = async (path: string, body: Body, key?: string): Promise<number> => {
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
    if (typeof body === 'string') headers['content-type'] = 'application/json';
    const res = await fetch(`${gw.httpUrl}${path}`, { method: 'POST', headers, body });
    await res.arrayBuffer();
    return res.status;
  };

  for (const route of ROUTES) {
    it(`${route.path}: key, account, permission, rate, body, model, access, in that order`, async () => {
      // The key's stages answer before the body is read: a bad body does not change them.
      expect(await post(route.path, route.invalid())).toBe(401);
      expect(await post(route.path, route.invalid(), BLOCKED_KEY)).toBe(402);
      expect(await post(route.path, route.invalid(), READ_ONLY_KEY)).toBe(403);
      // The body is checked before the model it names is looked up.
      expect(await post(route.path, route.invalid(), TEST_KEY)).toBe(400);
      // An unknown model, and a private service of another account, are the same 404.
      expect(await post(route.path, route.valid('demo/nothing'), TEST_KEY)).toBe(404);
      expect(await post(route.path, route.valid('demo/private'), OTHER_ACCOUNT_KEY)).toBe(404);
      // The rate is counted before the body is read: the limited account (1 request a second) gets
      // 429 for some of three bad bodies sent at once, and 400 only for those within its rate.
      const statuses = await Promise.all([1, 2, 3].map(() => post(route.path, route.invalid(), LIMITED_KEY)));
      expect(statuses).toContain(429);
      expect(statuses.every((status) => status === 429 || status === 400)).toBe(true);
    });
  }
});
