/**
 * Issue 15: streamed chat (SSE) holds one of the account's concurrent-stream slots for the stream's
 * life, on every streaming chat route of both adapters. A real gateway on 127.0.0.1 and a raw service
 * whose streams stay open until the test lets them finish.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { OTHER_ACCOUNT_KEY, TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { startRawModel, type RawModel } from '../support/raw-model.js';

const STREAM_QUOTA = 2;

describe('streamed chat counts in the concurrent-stream quota (issue 15)', () => {
  let gw: TestGateway;
  let model: RawModel;
  let base: string;
  let direct: string;
  /** Held streams by their user message; resolving one lets its stream finish. */
  const releases = new Map<string, () => void>();

  beforeAll(async () => {
    const input = chatConfigInput();
    input.limits = { concurrentStreamsPerAccount: STREAM_QUOTA };
    gw = await startTestGateway(input);
    base = `${gw.httpUrl}/api/adapters/chatapi`;
    direct = `${gw.httpUrl}/api/adapters/chatapi-direct`;
    // One chunk at once (so the caller knows its stream is open), the rest when released.
    model = await startRawModel(gw.grpcAddress, CHAT_TOKENS.echo, (req) => {
      const key = String(req.data.messages?.at(-1)?.content ?? '');
      return (async function* held() {
        yield {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'echo-1',
          choices: [{ index: 0, delta: { role: 'assistant', content: key }, finish_reason: null }],
        };
        if (key.startsWith('hold')) await new Promise<void>((resolve) => releases.set(key, resolve));
        yield {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'echo-1',
          choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        };
      })();
    });
  });
  afterAll(async () => {
    for (const release of releases.values()) release();
    model?.close();
    await gw?.close();
  });

  const post = (url: string, body: unknown, key = TEST_KEY, signal?: AbortSignal) =>
    fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  const chat = (content: string, stream = true) => ({ model: 'demo/echo', stream, messages: [{ role: 'user', content }] });

  /** Opens a stream and waits for its first bytes, so its slot is surely taken; `rest` reads it to its end. */
  async function hold(key: string, signal?: AbortSignal): Promise<{ rest(): Promise<string> }> {
    const res = await post(`${base}/chat/completions`, chat(key), TEST_KEY, signal);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    return {
      async rest() {
        let text = '';
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += Buffer.from(chunk.value).toString('utf8');
        return text;
      },
    };
  }

  it('refuses a stream past the quota on every streaming route (429, Anthropic-shaped on Messages); others go on', async () => {
    const first = await hold('hold-1');
    await hold('hold-2');

    const refused = await post(`${base}/chat/completions`, chat('one too many'));
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toMatchObject({ code: 'TOO_MANY_CONCURRENT_STREAMS' });
    const viaDirect = await post(`${direct}/chat/completions`, chat('one too many'));
    expect(viaDirect.status).toBe(429);
    expect((await viaDirect.json()).error).toMatchObject({ code: 'TOO_MANY_CONCURRENT_STREAMS' });
    const viaResponses = await post(`${base}/responses`, { model: 'demo/echo', stream: true, input: 'one too many' });
    expect(viaResponses.status).toBe(429);
    const viaMessages = await post(`${base}/v1/messages`, {
      model: 'demo/echo',
      stream: true,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'one too many' }],
    });
    expect(viaMessages.status).toBe(429);
    expect(await viaMessages.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });

    // A call without `stream` takes no slot, and another account has its own slots.
    expect((await post(`${base}/chat/completions`, chat('not streamed', false))).status).toBe(200);
    const theirs = await post(`${base}/chat/completions`, chat('other account'), OTHER_ACCOUNT_KEY);
    expect(theirs.status).toBe(200);
    expect(await theirs.text()).toContain('[DONE]');

    // A stream that ends frees its slot.
    releases.get('hold-1')!();
    expect(await first.rest()).toContain('[DONE]');
    await eventually(
      async () => (await post(`${base}/chat/completions`, chat('after end'))).status === 200,
      5000,
      'a slot freed by an ended stream',
    );
    releases.get('hold-2')!();
  });

  it('a cancelled stream frees its slot', async () => {
    const aborts = [new AbortController(), new AbortController()];
    await hold('hold-a', aborts[0]!.signal);
    await hold('hold-b', aborts[1]!.signal);
    expect((await post(`${base}/chat/completions`, chat('full'))).status).toBe(429);

    for (const abort of aborts) abort.abort();
    // The service hears of the cancel, and the account streams again.
    await eventually(() => model.cancels.length >= 2, 5000, 'the service told of both cancels');
    await eventually(
      async () => (await post(`${base}/chat/completions`, chat('after cancel'))).status === 200,
      5000,
      'slots freed by cancelled streams',
    );
    const again = await post(`${base}/chat/completions`, chat('second after cancel'));
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('[DONE]');
  });
});
