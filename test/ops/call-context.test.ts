import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpRequestEvent } from '../../core/observe/events.js';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { eventually, startTestGateway, TEST_KEY, type TestGateway } from '../support/gateway.js';
import { startRawModel, type RawModel } from '../support/raw-model.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';

const CALLER_TRACE = '7d3c1f0e2b4a59687a6b5c4d3e2f1a0b';
const CALLER_SPAN = '1a2b3c4d5e6f7081';
const fixture = fileURLToPath(new URL('../fixtures/plugins/copied-headers.ts', import.meta.url));

/**
 * The Gate finds a call's request record and trace in the call context the plugin passes to `open`,
 * not through the identity of the headers object (issue 26): a plugin that copies the service
 * headers into an object of its own keeps the request's timings, its service in the access record,
 * and the service-call span, and its own headers object is never written by the Gate.
 */
describe('a plugin that copies its service headers keeps tracing and timings', () => {
  let receiver: OtlpReceiver;
  let gw: TestGateway;
  let plain: RawModel;
  let spans: ReceivedSpan[];
  const requests: HttpRequestEvent[] = [];
  let contextHeaders: typeof import('../fixtures/plugins/copied-headers.js').contextHeaders;

  beforeAll(async () => {
    ({ contextHeaders } = await import('../fixtures/plugins/copied-headers.js'));
    receiver = await startOtlpReceiver();
    const input = chatConfigInput() as Record<string, unknown> & { plugins: Record<string, unknown> };
    gw = await startTestGateway({
      ...input,
      plugins: { ...input.plugins, custom: [{ path: fixture }] },
      tracing: { otlpEndpoint: receiver.url },
    });
    gw.gateway.events.on('httpRequest', (event) => requests.push(event));
    // The service answers a little later, so the request's wait for it is measurably above zero.
    plain = await startRawModel(gw.grpcAddress, CHAT_TOKENS.plain, async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { ok: true };
    });
    const res = await fetch(`${gw.httpUrl}/copied/demo/plain`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': TEST_KEY, 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: '{}',
    });
    expect(res.status, await res.text()).toBe(200);
    await eventually(() => requests.length === 1, 5000, 'the httpRequest event');
    plain.close();
    await gw.close();
    await eventually(() => receiver.spans.some((s) => s.name.startsWith('POST ') && s.traceId === CALLER_TRACE), 5000, 'the request span');
    spans = receiver.spans.filter((s) => s.traceId === CALLER_TRACE);
  });
  afterAll(async () => receiver?.close());

  it('counts the service wait and the service to the request record', () => {
    expect(requests[0]!.service).toBe('demo/plain');
    expect(requests[0]!.account).toBe('demo');
    expect(requests[0]!.serviceWaitMs).toBeGreaterThan(0);
  });

  it('makes the service call a child span of the request and parents the service on it', () => {
    const request = spans.find((s) => s.name.startsWith('POST '))!;
    const calls = spans.filter((s) => s.name === 'gateway.service_call');
    expect(calls, spans.map((s) => s.name).join(', ')).toHaveLength(1);
    expect(calls[0]!.parentSpanId).toBe(request.spanId);
    const sent = plain.requests.at(-1)!.headers;
    expect(sent.traceparent).toBe(`00-${CALLER_TRACE}-${calls[0]!.spanId}-01`);
    expect(sent['x-copied-by']).toBe('plugin');
  });

  it('never writes into the headers the plugin was given', () => {
    expect(contextHeaders).toHaveLength(1);
    expect(contextHeaders[0]!.after).toEqual(contextHeaders[0]!.before);
    expect(contextHeaders[0]!.before.traceparent).toBe(`00-${CALLER_TRACE}-${CALLER_SPAN}-01`);
  });
});
