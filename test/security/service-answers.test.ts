import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOKEN, TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { RawServiceStream, json, rawClient, type RawClient } from '../support/raw-gate-client.js';

/** Headers a hostile service sets on its answer: only X-Model-Version may reach the caller. */
const HOSTILE_HEADERS = {
  'Set-Cookie': 'session=stolen',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Credentials': 'true',
  Location: 'https://evil.example/',
  Refresh: '0; url=https://evil.example/',
  'Strict-Transport-Security': 'max-age=0',
  'X-Request-Id': 'forged',
  'X-Model-Version': '7',
};

/** Answers `{status, headers}` with that statusCode and those headers, as one frame or as two partial frames. */
function scriptedService(stream: RawServiceStream): void {
  stream.call.on('data', (m: any) => {
    if (m.body !== 'predict') return;
    const asked = JSON.parse(m.predict.data.json);
    if (asked.streamed) {
      stream.send({
        requestId: m.requestId,
        partialPredict: { data: json({ part: 1 }), statusCode: asked.status, headers: asked.headers, start: true },
      });
      stream.send({ requestId: m.requestId, partialPredict: { data: json({ part: 2 }), finish: true } });
    } else {
      stream.send({ requestId: m.requestId, predict: { data: json({ ok: true }), statusCode: asked.status, headers: asked.headers } });
    }
  });
}

describe('service answers: one reading for sync and async, final statuses and allowed headers only', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;
  const dataDir = mkdtempSync(join(tmpdir(), 'answers-'));

  beforeAll(async () => {
    gw = await startTestGateway(
      testConfigInput({
        store: { kind: 'memory', dataDir },
        plugins: { enabled: ['sync-predict', 'async-predict'], options: { 'async-predict': { pollMs: 20 } } },
      }),
    );
    client = rawClient(gw.grpcAddress);
    service = new RawServiceStream(client);
    service.startServing(ECHO_TOKEN, 'echo');
    scriptedService(service);
    await service.next((m) => m.body === 'serviceInfo');
  });

  afterAll(async () => {
    service?.close();
    client?.close();
    await gw?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const sync = (data: unknown) =>
    fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/echo/predict-with-config`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': TEST_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ data }),
    });

  it('an interim status (100, 101, 103) or one past 599 is SERVICE_BAD_RESPONSE (502), at once', async () => {
    for (const status of [100, 101, 103, 600]) {
      for (const streamed of [false, true]) {
        const res = await sync({ status, streamed });
        expect(res.status).toBe(502);
        const body = await res.json();
        expect(body.error.code).toBe('SERVICE_BAD_RESPONSE');
        expect(body.error.message).toContain(`statusCode ${status}`);
      }
    }
  });

  it('a final status passes; 0 means none (200)', async () => {
    expect((await sync({ status: 201 })).status).toBe(201);
    expect((await sync({ status: 503, streamed: true })).status).toBe(503);
    expect((await sync({ status: 0 })).status).toBe(200);
  });

  it('sync predict passes only allowed service headers', async () => {
    const res = await sync({ status: 302, headers: HOSTILE_HEADERS });
    expect(res.status).toBe(302);
    expect(res.headers.get('x-model-version')).toBe('7');
    for (const name of [
      'set-cookie',
      'access-control-allow-origin',
      'access-control-allow-credentials',
      'location',
      'refresh',
      'strict-transport-security',
    ]) {
      expect(res.headers.get(name)).toBeNull();
    }
    expect(res.headers.get('x-request-id')).not.toBe('forged');
  });

  it('the async result serves the status and allowed headers it stored, read the same way', async () => {
    const created = await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/model/echo/async/predict-with-config`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': TEST_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ data: { status: 201, headers: HOSTILE_HEADERS, streamed: true } }),
    });
    expect(created.status).toBe(200);
    const taskId = (await created.json()) as string;
    const url = `${gw.httpUrl}/api/platformgateway/account/demo/async/task/${taskId}/response`;
    let res: Response | undefined;
    await eventually(
      async () => (res = await fetch(url, { headers: { 'PLATFORM-API-KEY': TEST_KEY } })).status !== 204,
      5000,
      'the task to finish',
    );
    expect(res!.status).toBe(201);
    expect(await res!.json()).toEqual([{ part: 1 }, { part: 2 }]);
    expect(res!.headers.get('x-model-version')).toBe('7');
    expect(res!.headers.get('set-cookie')).toBeNull();
    expect(res!.headers.get('location')).toBeNull();
    expect(res!.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('an async answer with an interim status fails the task with SERVICE_BAD_RESPONSE', async () => {
    const created = await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/model/echo/async/predict-with-config`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': TEST_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ data: { status: 101 } }),
    });
    const taskId = (await created.json()) as string;
    const url = `${gw.httpUrl}/api/platformgateway/account/demo/async/task/${taskId}/response`;
    let res: Response | undefined;
    await eventually(
      async () => (res = await fetch(url, { headers: { 'PLATFORM-API-KEY': TEST_KEY } })).status !== 204,
      5000,
      'the task to finish',
    );
    expect(res!.status).toBe(502);
    expect((await res!.json()).error.code).toBe('SERVICE_BAD_RESPONSE');
  });
});
