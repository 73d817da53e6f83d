import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import {
  ECHO_TOKEN,
  PRIVATE_TOKEN,
  TEST_KEY,
  eventually,
  startTestGateway,
  testConfigInput,
  type TestGateway,
} from '../support/gateway.js';
import { RawServiceStream, json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';
import { hasFamily, sampleSum } from './prometheus-text.js';

const METRICS_TOKEN = 'metrics-scrape-token-0001';
const LIMITED_KEY = 'test-key-limited-account-00001';

describe('metrics plugin', () => {
  let gw: TestGateway;
  let echo: ModelService;
  let client: RawClient;
  let raw: RawServiceStream;

  beforeAll(async () => {
    const input = testConfigInput({
      plugins: { enabled: ['chatapi', 'async-predict', 'metrics'], options: { metrics: { bearerToken: METRICS_TOKEN } } },
    });
    input.services[0].family = 'openai';
    input.accounts.push({ id: 5, name: 'limited', requestsPerSecond: 1 });
    input.apiKeys.push({ name: 'limited', account: 'limited', key: LIMITED_KEY, permissions: ['MODEL_REQUESTS'] });
    gw = await startTestGateway(input);
    echo = startEchoService({ gateways: gw.grpcAddress, connectionToken: ECHO_TOKEN, logger: silentLogger });
    await echo.ready();
    client = rawClient(gw.grpcAddress);
    raw = connectRaw('raw-boot-1');
    await eventually(() => gw.gateway.gate.hasInstances(11), 5000, 'raw service registered');
  });
  afterAll(async () => {
    raw?.close();
    await echo?.stop();
    client?.close();
    await gw?.close();
  });

  /** The private service on the raw protocol: answers predict with `{ok: true}` after 5 ms. */
  function connectRaw(bootUuid: string): RawServiceStream {
    const stream = new RawServiceStream(client);
    stream.startServing(PRIVATE_TOKEN, bootUuid);
    stream.call.on('data', (m: any) => {
      if (m.body === 'predict') setTimeout(() => stream.send({ requestId: m.requestId, predict: { data: json({ ok: true }) } }), 5);
    });
    return stream;
  }

  const scrape = async (token = METRICS_TOKEN) => {
    const res = await fetch(`${gw.httpUrl}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const chat = (body: Record<string, unknown>, key = TEST_KEY) =>
    fetch(`${gw.httpUrl}/api/adapters/chatapi/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'one two three four' }], ...body }),
    });

  it('refuses a scrape without the configured bearer token', async () => {
    expect((await scrape('')).status).toBe(401);
    expect((await scrape('wrong-token-000000000000')).status).toBe(401);
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.type).toContain('text/plain');
  });

  it('moves every family as requests flow (scrape before and after)', async () => {
    const before = (await scrape()).text;
    const chatLabels = {
      plugin: 'chatapi',
      route: '/api/adapters/chatapi{/v1}/chat/completions',
      method: 'POST',
      status: '200',
      service: 'demo/echo',
    };

    const whole = (await (await chat({})).json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const streamed = await chat({ stream: true });
    await streamed.text();
    // The limited account: one request a second, the second at once is refused.
    await chat({}, LIMITED_KEY);
    expect((await chat({}, LIMITED_KEY)).status).toBe(429);
    // A gRPC client call to the raw service, and a billing charge for it.
    const answer = await processUnary(client, {
      account: 'demo',
      model: 'private',
      authToken: TEST_KEY,
      predict: { data: json({ q: 1 }) },
    });
    expect(answer.error).toBeFalsy();
    raw.send({
      requestId: 0,
      deferredBillingCharges: { charges: [{ idempotencyKey: 'k-1', amount: 7, currency: 'USD' }], params: { callerAccountId: 1 } },
    });
    // An async task through to its result.
    const created = await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/model/echo/async/predict`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': TEST_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [] }),
    });
    const taskId = (await created.json()) as string;
    await eventually(
      async () =>
        (
          (await (
            await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/async/task/${taskId}`, {
              headers: { 'PLATFORM-API-KEY': TEST_KEY },
            })
          ).json()) as any
        ).status === 'COMPLETED',
      5000,
      'task completed',
    );
    // A reconnect of the same process (same boot UUID), then a stream lost without goodbye.
    const second = connectRaw('raw-boot-1');
    await eventually(
      async () => sampleSum((await scrape()).text, 'gateway_service_reconnects_total', { service: 'demo/private' }) >= 1,
      5000,
      'reconnect counted',
    );
    raw.close(); // replaced already: a graceful end
    second.cancel(); // still serving, no stopServing: a lost stream
    await eventually(
      async () => sampleSum((await scrape()).text, 'gateway_service_streams_dropped_total', { service: 'demo/private' }) >= 1,
      5000,
      'drop counted',
    );
    raw = connectRaw('raw-boot-2');
    await eventually(() => gw.gateway.gate.hasInstances(11), 5000, 'raw service back');

    const after = (await scrape()).text;
    const moved = (name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels);

    expect(moved('gateway_http_requests_total', chatLabels)).toBe(3); // whole, streamed, the limited account's first
    expect(moved('gateway_http_request_duration_seconds_count', chatLabels)).toBe(3);
    expect(moved('gateway_http_requests_total', { ...chatLabels, status: '429', service: 'none' })).toBe(1);
    expect(moved('gateway_overhead_seconds_count', { transport: 'http', route: chatLabels.route })).toBeGreaterThanOrEqual(2);
    expect(moved('gateway_grpc_client_calls_total', { method: 'process', service: 'demo/private', code: 'OK' })).toBe(1);
    expect(moved('gateway_grpc_client_call_duration_seconds_count', { method: 'process' })).toBe(1);
    expect(moved('gateway_overhead_seconds_count', { transport: 'grpc', route: 'process' })).toBe(1);
    expect(moved('gateway_service_calls_total', { service: 'demo/echo', outcome: 'ok' })).toBeGreaterThanOrEqual(3);
    expect(moved('gateway_service_call_duration_seconds_count', { service: 'demo/private' })).toBe(1);
    expect(moved('gateway_stream_first_chunk_seconds_count', { service: 'demo/echo' })).toBe(1);
    expect(moved('gateway_stream_chunk_gap_seconds_count', { service: 'demo/echo' })).toBeGreaterThanOrEqual(1);
    expect(moved('gateway_tokens_total', { account: 'demo', service: 'demo/echo', direction: 'input' })).toBeGreaterThanOrEqual(
      whole.usage.prompt_tokens,
    );
    expect(moved('gateway_tokens_total', { account: 'demo', service: 'demo/echo', direction: 'output' })).toBeGreaterThanOrEqual(
      whole.usage.completion_tokens,
    );
    expect(moved('gateway_billing_charges_total', { service: 'demo/private', currency: 'USD' })).toBe(1);
    expect(moved('gateway_billing_amount_total', { service: 'demo/private', currency: 'USD' })).toBe(7);
    expect(moved('gateway_rejections_total', { code: 'RATE_LIMIT_EXCEEDED' })).toBe(1);
    expect(moved('gateway_async_tasks_total', { status: 'QUEUED' })).toBe(1);
    expect(moved('gateway_async_tasks_total', { status: 'COMPLETED' })).toBe(1);
    expect(moved('gateway_async_task_queue_wait_seconds_count')).toBe(1);
    expect(moved('gateway_async_task_processing_seconds_count')).toBe(1);
    expect(moved('gateway_service_reconnects_total', { service: 'demo/private' })).toBe(1);
    expect(moved('gateway_service_streams_dropped_total', { service: 'demo/private' })).toBe(1);
    expect(moved('gateway_service_disconnects_total', { service: 'demo/private' })).toBe(2);
    expect(sampleSum(after, 'gateway_service_instances', { service: 'demo/echo' })).toBe(1);
    expect(sampleSum(after, 'gateway_service_instances', { service: 'demo/private' })).toBe(1);
    expect(hasFamily(after, 'gateway_service_in_flight')).toBe(true);
    expect(hasFamily(after, 'gateway_service_load')).toBe(true);
    // Fitting is not enabled here: the family is declared and stays at zero.
    expect(hasFamily(after, 'gateway_fitting_jobs_total')).toBe(true);
    // Process metrics from prom-client's defaults.
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'process_resident_memory_bytes']) {
      expect(sampleSum(after, name)).toBeGreaterThan(0);
    }
  });

  it('shows in-flight requests while a service works on them', async () => {
    const slow = new RawServiceStream(client);
    slow.startServing(PRIVATE_TOKEN, 'raw-slow');
    await eventually(() => gw.gateway.gate.instances(11).length >= 2, 5000, 'slow instance registered');
    raw.close();
    await eventually(() => gw.gateway.gate.instances(11).length === 1, 5000, 'only the slow instance serves');
    const pending = processUnary(client, { account: 'demo', model: 'private', authToken: TEST_KEY, predict: { data: json({ q: 2 }) } });
    const request = await slow.next((m) => m.body === 'predict');
    const during = (await scrape()).text;
    expect(sampleSum(during, 'gateway_service_in_flight', { service: 'demo/private' })).toBe(1);
    expect(sampleSum(during, 'gateway_service_load', { service: 'demo/private' })).toBe(1);
    slow.send({ requestId: request.requestId, predict: { data: json({ done: true }) } });
    await pending;
    expect(sampleSum((await scrape()).text, 'gateway_service_in_flight', { service: 'demo/private' })).toBe(0);
    slow.close();
    raw = connectRaw('raw-boot-3');
  });
});

describe('label cardinality', () => {
  it('keeps the first values of a label and counts any later one as other', async () => {
    const { LabelCap } = await import('../../plugins/metrics/label-cap.js');
    const cap = new LabelCap(2);
    expect([cap.value('a'), cap.value('b'), cap.value('c'), cap.value('a'), cap.value(undefined)]).toEqual([
      'a',
      'b',
      'other',
      'a',
      'none',
    ]);
  });
});
