/**
 * An engine that answers its health check only between generations (llama.cpp's server: 3 of 3
 * probes with a 2 s timeout failed during one 8 s generation) stays in routing while it makes
 * progress on calls in flight, and is not probed then: other callers keep getting answers instead of
 * 503 during a long agent turn. Real gateway, real HTTP engine on loopback, the official OpenAI SDK.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';

describe('upstream health under long generations', () => {
  let server: http.Server;
  let gw: TestGateway;
  let client: OpenAI;
  let generating = 0;
  let probes = 0;
  /** Probes that came while a generation ran (held until it ended, as llama.cpp's server does). */
  let probesWhileGenerating = 0;
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        if (req.url === '/v1/models') {
          probes++;
          // Busy generating: no answer until it is done (held, answered after).
          if (generating > 0) {
            probesWhileGenerating++;
            return void held.push(res);
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end('{"object":"list","data":[]}');
        }
        const body = JSON.parse(text) as { stream?: boolean };
        const head = { id: 'c', created: 1, model: 'm' };
        if (!body.stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(
            JSON.stringify({
              ...head,
              object: 'chat.completion',
              choices: [{ index: 0, message: { role: 'assistant', content: 'quick' }, finish_reason: 'stop' }],
            }),
          );
        }
        // A 2 s generation: a token every 150 ms.
        generating++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let n = 0;
        const timer = setInterval(() => {
          const done = ++n >= 14;
          res.write(
            `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 't' }, finish_reason: done ? 'stop' : null }] })}\n\n`,
          );
          if (!done) return;
          clearInterval(timer);
          generating--;
          res.end('data: [DONE]\n\n');
          for (const r of held.splice(0)) if (!r.destroyed) r.writeHead(200).end('{"object":"list","data":[]}');
        }, 150);
      });
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    gw = await startTestGateway(
      testConfigInput({
        services: [
          {
            id: 40,
            name: 'llama',
            account: 'demo',
            public: true,
            family: 'openai',
            upstream: {
              api: 'openai',
              baseUrl: url,
              defaultModel: 'm',
              // A probe's timeout with room for a machine busy with the rest of the suite: at 100 ms, two
              // probes answered late took the engine out before the first request (2 runs of 30 beside another test run).
              healthCheck: { path: '/models', intervalMs: 100, timeoutMs: 500, failuresBeforeDown: 2 },
            },
          },
        ],
        plugins: { enabled: ['chatapi', 'upstream'] },
      }),
    );
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
    await eventually(() => probes > 0 && gw.gateway.gate.instances().length > 0, 5000, 'the engine to pass its first probe');
  });
  afterAll(async () => {
    await gw?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('answers other callers during a 2 s generation that the engine answers no probe in, and probes it only when idle', async () => {
    const stream = await client.chat.completions.create({
      model: 'demo/llama',
      messages: [{ role: 'user', content: 'long' }],
      stream: true,
    });
    const reading = (async () => {
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Past what probing would take: two probes of 500 ms and the interval between them would have taken
    // the engine out about 1.2 s into the generation, and the last calls come at 1.7 and 2.0 s.
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const quick = await client.chat.completions.create({ model: 'demo/llama', messages: [{ role: 'user', content: 'quick' }] });
      expect(quick.choices[0]!.message.content).toBe('quick');
    }
    expect(await reading).toBe('t'.repeat(14));
    // At most a probe already on its way as the generation began; none while it made progress. Counted
    // by the engine while it generated: on a busy machine the calls above can run past the generation's
    // end, when probing rightly resumes.
    expect(probesWhileGenerating).toBeLessThanOrEqual(1);
    const afterGeneration = probes;
    await eventually(() => probes > afterGeneration, 3000, 'probes to resume once the engine is idle');
  });
});
