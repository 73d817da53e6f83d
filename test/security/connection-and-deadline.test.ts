import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { RawServiceStream, json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

/** Reads from a raw socket until `done(text)` says the response is complete, or the socket closes. */
function readUntil(socket: Socket, done: (text: string) => boolean): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (closed: boolean) => {
      socket.off('data', onData);
      resolve({ text, closed });
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (done(text)) finish(false);
    };
    socket.on('data', onData);
    socket.once('close', () => finish(true));
  });
}

describe('hostile HTTP bodies and gRPC deadlines', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;
  const limit = 64 * 1024;

  beforeAll(async () => {
    gw = await startTestGateway(
      testConfigInput({
        server: { httpPort: 0, grpcPort: 0, bodyLimitBytes: limit, refusedBodyDrainBytes: limit / 2 },
        plugins: { enabled: ['sync-predict'] },
      }),
    );
    client = rawClient(gw.grpcAddress);
    service = new RawServiceStream(client);
    service.startServing(ECHO_TOKEN, 'echo');
    // Answers each predict after 200 ms, so an overflowed deadline (fires after ~1 ms) shows.
    service.call.on('data', (m: any) => {
      if (m.body === 'predict') setTimeout(() => service.send({ requestId: m.requestId, predict: { data: json({ ok: true }) } }), 200);
    });
    await service.next((m) => m.body === 'serviceInfo');
  });

  afterAll(async () => {
    service?.close();
    client?.close();
    await gw?.close();
  });

  it('closes the connection after a 413 on a chunked body longer than the drain bound, so the next request is not poisoned', async () => {
    const { port } = new URL(gw.httpUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /api/platformgate/account/demo/model/echo/predict HTTP/1.1\r\nHost: x\r\nPLATFORM-API-KEY: ${TEST_KEY}\r\n` +
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const chunk = Buffer.alloc(16 * 1024, 'a');
    // Four times the limit, in chunks, without ending the body: the attack of issue #15 item 9. What
    // follows the refusal is more than server.refusedBodyDrainBytes (half the limit here).
    for (let i = 0; i < 8; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`);
    const started = Date.now();
    const answer = await readUntil(socket, (text) => /\r\n\r\n[\s\S]*"code":"REQUEST_TOO_LARGE"[\s\S]*\}\}$/.test(text));
    expect(answer.text).toMatch(/^HTTP\/1\.1 413/);
    // The gateway ends the connection past the drain bound instead of leaving the rest of the body in it.
    const closed =
      answer.closed ||
      (await new Promise<boolean>((resolve) => {
        socket.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 3000);
      }));
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
    socket.destroy();

    // Other callers keep being served.
    const res = await fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/echo/predict`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': TEST_KEY, 'Content-Type': 'application/json' },
      body: '{"x":1}',
    });
    expect(res.status).toBe(200);
  });

  it('keeps a connection whose error came after the whole body was read', async () => {
    const res = await fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/echo/predict-with-config`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': TEST_KEY, 'Content-Type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('connection')).not.toBe('close');
  });

  it('clamps a gRPC timeoutSec past the timer range instead of timing out at once', async () => {
    for (const timeoutSec of [2_147_484, 2_147_483_647]) {
      const res = await processUnary(client, {
        account: 'demo',
        model: 'echo',
        authToken: TEST_KEY,
        timeoutSec,
        predict: { data: json({}) },
      });
      expect(res.error).toBeUndefined();
      expect(JSON.parse(res.predict!.data!.json!)).toEqual({ ok: true });
    }
  });
});
