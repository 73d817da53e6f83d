/**
 * Issue 25, N13: a non-streamed answer over 16 MiB (`gate.maxBufferedAnswerBytes`) sent in one frame
 * was 408 CALLER_TOO_SLOW although the caller was reading it: the slow-reader bound counted the frame
 * the reader was about to take. A whole answer is bounded by `gate.maxAnswerBytes` (502
 * SERVICE_ANSWER_TOO_LARGE past it), never by the slow-reader buffer. Here the bounds are scaled down
 * (4 MiB buffer, 8 MiB answer) against a real gateway and a dialled-in service on loopback, called by
 * another account over HTTP (sync predict, chat) and gRPC `process`.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { OTHER_ACCOUNT_KEY, startTestGateway, type TestGateway } from '../support/gateway.js';
import { RawServiceStream, json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

const MiB = 2 ** 20;

/** `demo/plain` answers `{size: n}` (or a chat whose last message is `size n`) with one predict frame of about n bytes. */
function serveSized(stream: RawServiceStream): void {
  stream.call.on('data', (m: any) => {
    if (m.body !== 'predict') return;
    const data = JSON.parse(m.predict.data.json);
    const size = data.size ?? Number(/^size (\d+)$/.exec(data.messages?.at(-1)?.content ?? '')?.[1] ?? 0);
    const answer = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(size) }, finish_reason: 'stop' }],
    };
    stream.send({ requestId: m.requestId, predict: { data: json(answer) } });
  });
}

describe('a whole answer in one frame is bounded by gate.maxAnswerBytes, not the slow-reader buffer (issue 25 N13)', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;

  beforeAll(async () => {
    const input = chatConfigInput();
    input.gate = { heartbeatIntervalMs: 200, defaultTimeoutSec: 20, maxBufferedAnswerBytes: 4 * MiB, maxAnswerBytes: 8 * MiB };
    input.services.find((s: any) => s.name === 'plain').public = true;
    input.plugins.enabled = ['chatapi', 'sync-predict'];
    gw = await startTestGateway(input);
    client = rawClient(gw.grpcAddress);
    service = new RawServiceStream(client);
    service.startServing(CHAT_TOKENS.plain, 'plain');
    serveSized(service);
    await service.next((m) => m.body === 'serviceInfo');
  });
  afterAll(async () => {
    service?.close();
    client?.close();
    await gw?.close();
  });

  it('sync predict: a 6 MiB answer (past the 4 MiB buffer) is delivered whole', async () => {
    const res = await request(gw.httpUrl)
      .post('/api/platformgate/account/demo/model/plain/predict-with-config')
      .set('PLATFORM-API-KEY', OTHER_ACCOUNT_KEY)
      .send({ data: { size: 6 * MiB } });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body).length).toBeGreaterThan(6 * MiB);
  });

  it('chat without stream: the same', async () => {
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi/v1/chat/completions')
      .set('Authorization', `Bearer ${OTHER_ACCOUNT_KEY}`)
      .send({ model: 'demo/plain', messages: [{ role: 'user', content: `size ${6 * MiB}` }] });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content.length).toBe(6 * MiB);
  });

  it('gRPC process: the same', async () => {
    const res = await processUnary(client, {
      account: 'demo',
      model: 'plain',
      authToken: OTHER_ACCOUNT_KEY,
      predict: { data: json({ size: 6 * MiB }) },
    });
    expect(res.error).toBeUndefined();
    expect(res.predict?.data?.json?.length).toBeGreaterThan(6 * MiB);
  });

  it('past gate.maxAnswerBytes (9 MiB in one frame): 502 SERVICE_ANSWER_TOO_LARGE, not 408', async () => {
    const res = await request(gw.httpUrl)
      .post('/api/platformgate/account/demo/model/plain/predict-with-config')
      .set('PLATFORM-API-KEY', OTHER_ACCOUNT_KEY)
      .send({ data: { size: 9 * MiB } });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: 'SERVICE_ANSWER_TOO_LARGE' });
    const grpc = await processUnary(client, {
      account: 'demo',
      model: 'plain',
      authToken: OTHER_ACCOUNT_KEY,
      predict: { data: json({ size: 9 * MiB }) },
    });
    expect(grpc.error).toMatchObject({ code: 'SERVICE_ANSWER_TOO_LARGE', statusCode: 502 });
  });
});
