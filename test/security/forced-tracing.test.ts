/**
 * Issue 25 N11: anyone could force full tracing with `traceparent: 00-…-01`, even with a wrong key:
 * the gateway followed every caller's sampled flag, so an attacker made every one of its requests a
 * recorded, exported trace (spans, stage spans, a sampled traceparent to the service) whatever
 * `tracing.sampleRatio` said. Now the flag is followed only for a key whose config says
 * `followTraceSampling: true`; here `sampleRatio` is 0, so only that key's requests are traced.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { OTHER_ACCOUNT_KEY, TEST_KEY, eventually, startTestGateway } from '../support/gateway.js';
import { json, processUnary, rawClient } from '../support/raw-gate-client.js';
import { startRawModel, type RawModel } from '../support/raw-model.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../ops/support/otlp-receiver.js';

const TRUSTED_KEY = 'test-key-trace-sampling-0000001';
const CALLER_SPAN = '00f067aa0ba902b7';
const trace = (n: number) => `${String(n).padStart(2, '0')}${'ab'.repeat(15)}`;
/** Wrong key, no key, two tenants' valid keys without the switch: none may force a trace. */
const ATTACKS = [
  { traceId: trace(1), authorization: 'Bearer not-a-key-000000000000000' },
  { traceId: trace(2), authorization: undefined },
  { traceId: trace(3), authorization: `Bearer ${TEST_KEY}` },
  { traceId: trace(4), authorization: `Bearer ${OTHER_ACCOUNT_KEY}` },
];
const TRUSTED_TRACE = trace(9);
const GRPC_TRACE = trace(7);
const chatAnswer = {
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
};

describe("a caller's sampled flag is followed only for keys that may decide (issue 25 N11)", () => {
  let receiver: OtlpReceiver;
  let plain: RawModel;
  let spans: ReceivedSpan[];
  const served = new Map<string, string>();

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const input: Record<string, any> = { ...chatConfigInput(), tracing: { otlpEndpoint: receiver.url, sampleRatio: 0 } };
    input.apiKeys.push({ name: 'traced', account: 'demo', key: TRUSTED_KEY, permissions: ['MODEL_REQUESTS'], followTraceSampling: true });
    const gw = await startTestGateway(input);
    plain = await startRawModel(gw.grpcAddress, CHAT_TOKENS.plain, () => chatAnswer);
    for (const { traceId, authorization } of [...ATTACKS, { traceId: TRUSTED_TRACE, authorization: `Bearer ${TRUSTED_KEY}` }]) {
      const res = await fetch(`${gw.httpUrl}/api/adapters/chatapi/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          traceparent: `00-${traceId}-${CALLER_SPAN}-01`,
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ model: 'demo/plain', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.text();
      if (res.status === 200) served.set(traceId, String(plain.requests.at(-1)!.headers.traceparent));
    }
    // gRPC: the key comes in the message, after the span starts: its flag is never followed.
    const client = rawClient(gw.grpcAddress);
    const metadata = new grpc.Metadata();
    metadata.set('traceparent', `00-${GRPC_TRACE}-${CALLER_SPAN}-01`);
    expect(
      (
        await processUnary(
          client,
          { account: 'demo', model: 'plain', authToken: TRUSTED_KEY, predict: { data: json({ messages: [] }) } },
          metadata,
        )
      ).error,
    ).toBeUndefined();
    client.close();
    plain.close();
    await gw.close();
    await eventually(
      () => receiver.spans.some((s) => s.traceId === TRUSTED_TRACE && s.name.startsWith('POST ')),
      5000,
      'the trusted request span',
    );
    spans = receiver.spans;
  });
  afterAll(async () => receiver?.close());

  it('records no span of the attackers, nor of a valid key without followTraceSampling', () => {
    for (const { traceId } of [...ATTACKS, { traceId: GRPC_TRACE }])
      expect(
        spans.filter((s) => s.traceId === traceId),
        traceId,
      ).toEqual([]);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([TRUSTED_TRACE]));
  });

  it('sends the service a not-sampled traceparent for their requests, a sampled one for the trusted key', () => {
    for (const { traceId } of ATTACKS.slice(2)) expect(served.get(traceId)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(served.get(TRUSTED_TRACE)).toMatch(new RegExp(`^00-${TRUSTED_TRACE}-[0-9a-f]{16}-01$`));
  });

  it('traces the trusted key with its stages, parented on the caller', () => {
    const request = spans.find((s) => s.traceId === TRUSTED_TRACE && s.name.startsWith('POST '))!;
    expect(request.parentSpanId).toBe(CALLER_SPAN);
    expect(spans.filter((s) => s.traceId === TRUSTED_TRACE).map((s) => s.name)).toEqual(
      expect.arrayContaining(['gateway.admission', 'gateway.service_call']),
    );
  });
});
