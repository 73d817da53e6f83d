import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientHttp2Stream } from 'node:http2';
import type { ClientResponseProto } from '../../proto/src/index.js';
import { gateServiceDefinition } from '../../proto/src/index.js';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { wireCall, wireSession } from '../support/grpc-wire.js';
import { figure, liveMiB, peakGrowth } from '../support/memory-watch.js';
import { RawServiceStream, json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

const MiB = 2 ** 20;
const definition = gateServiceDefinition();
const BOUND = 4 * MiB;

/** One chat chunk of about `bytes` bytes, as a flooding service sends it. */
const chunkOf = (bytes: number) =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { content: 'x'.repeat(bytes) }, finish_reason: null }],
  });

/**
 * `demo/plain` as a hostile or broken service: `{flood: n}` (or a chat whose last message is
 * `flood n`) answers n partialPredict frames of 1 MiB as fast as the gateway reads them, stopping at
 * `cancel`; `{frozen: true}` on processStream stops reading its stream altogether; anything else is
 * answered `{ok: true}`.
 */
function hostileService(stream: RawServiceStream) {
  const cancelled = new Set<number>();
  const frame = chunkOf(MiB);
  stream.call.on('data', async (m: any) => {
    if (m.body === 'cancel') {
      cancelled.add(Number(m.cancel?.requestIdToCancel ?? m.requestId));
      return;
    }
    const payload =
      m.body === 'predict' ? m.predict.data : m.body === 'partialPredict' && m.partialPredict.start ? m.partialPredict.data : undefined;
    if (!payload?.json) return;
    const data = JSON.parse(payload.json);
    const flood = data.flood ?? Number(/^flood (\d+)$/.exec(data.messages?.at(-1)?.content ?? '')?.[1] ?? 0);
    if (data.frozen) {
      stream.call.pause();
      return;
    }
    if (!flood) {
      stream.send({ requestId: m.requestId, predict: { data: json({ ok: true }) } });
      return;
    }
    for (let i = 0; i < flood && !cancelled.has(Number(m.requestId)); i++) {
      if (
        !stream.call.write({ requestId: m.requestId, partialPredict: { data: { json: frame }, start: i === 0, finish: i === flood - 1 } })
      )
        await once(stream.call, 'drain');
    }
  });
  return { cancelled };
}

describe('relays under a caller that does not read or a service that does not read', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;
  let hostile: ReturnType<typeof hostileService>;

  beforeAll(async () => {
    const input = chatConfigInput();
    input.gate = { heartbeatIntervalMs: 200, defaultTimeoutSec: 10, maxBufferedAnswerBytes: BOUND, maxAnswerBytes: 8 * MiB };
    input.plugins.enabled = ['chatapi', 'sync-predict'];
    gw = await startTestGateway(input);
    client = rawClient(gw.grpcAddress);
    service = new RawServiceStream(client);
    service.startServing(CHAT_TOKENS.plain, 'plain');
    hostile = hostileService(service);
    await service.next((m) => m.body === 'serviceInfo');
  });

  afterAll(async () => {
    service?.close();
    client?.close();
    await gw?.close();
  });

  const served = async () => {
    const res = await processUnary(client, { account: 'demo', model: 'plain', authToken: TEST_KEY, predict: { data: json({}) } });
    expect(res.error).toBeUndefined();
  };
  const lastRequestId = () => Math.max(...[...hostile.cancelled]);

  it('processResponseStream: a caller that stops reading gets CALLER_TOO_SLOW and the service gets cancel', async () => {
    const before = hostile.cancelled.size;
    const wire = wireSession(gw.grpcAddress);
    const request = definition.processResponseStream!.requestSerialize({
      account: 'demo',
      model: 'plain',
      authToken: TEST_KEY,
      predict: { data: json({ flood: 256 }) },
    }) as Buffer;
    const base = liveMiB();
    let response: ClientHttp2Stream | undefined;
    const done = wireCall(wire, definition.processResponseStream!.path, request, { onStream: (s) => (response = s) });
    response!.pause(); // an HTTP/2 stream that is not read stops acknowledging: the caller stopped reading
    // Held at the worst moment: when the bound is hit (or after 3 s of flooding, when nothing bounds it).
    await eventually(() => hostile.cancelled.size > before, 3000, 'the service to get cancel').catch(() => undefined);
    const held = liveMiB() - base;
    figure('processResponseStream, caller not reading, 256 x 1 MiB flood: held', held);
    response!.resume();
    const outcome = await done;
    wire.close();
    const last = definition.processResponseStream!.responseDeserialize(outcome.messages.at(-1)!) as ClientResponseProto;
    expect(last.error?.code).toBe('CALLER_TOO_SLOW');
    // 256 MiB flooded; before the bound the gateway held all it could read for the caller.
    expect(held).toBeLessThan(BOUND / MiB + 24);
    await served();
  });

  it('chat SSE: a caller that stops reading is cut off and the service gets cancel', async () => {
    const before = hostile.cancelled.size;
    const { port } = new URL(gw.httpUrl);
    const base = liveMiB();
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const body = JSON.stringify({ model: 'demo/plain', stream: true, messages: [{ role: 'user', content: 'flood 256' }] });
    socket.write(
      `POST /api/adapters/chatapi/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause(); // never reads the answer
    await eventually(() => hostile.cancelled.size > before, 3000, 'the service to get cancel').catch(() => undefined);
    const held = liveMiB() - base;
    figure('chat SSE, caller not reading, 256 x 1 MiB flood: held', held);
    await eventually(() => hostile.cancelled.size > before, 20_000, 'the service to get cancel');
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.resume();
    await closed; // the gateway cut the connection of the caller that did not read
    expect(held).toBeLessThan(BOUND / MiB + 24);
    await served();
  });

  it('sync predict: an answer over gate.maxAnswerBytes is SERVICE_ANSWER_TOO_LARGE (502) and the service gets cancel', async () => {
    const before = hostile.cancelled.size;
    const { result: res, rssMiB } = await peakGrowth(() =>
      fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/plain/predict-with-config`, {
        method: 'POST',
        headers: { 'PLATFORM-API-KEY': TEST_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ data: { flood: 256 } }),
      }),
    );
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe('SERVICE_ANSWER_TOO_LARGE');
    await eventually(() => hostile.cancelled.size > before, 5000, 'the service to get cancel');
    figure('sync predict, 256 x 1 MiB partial answer: peak RSS growth', rssMiB);
    expect(rssMiB).toBeLessThan(96);
    expect(lastRequestId()).toBeGreaterThan(0);
    await served();
  });

  it('processStream to a frozen service: the caller is paused instead of the gateway buffering its messages', async () => {
    const frozen = new RawServiceStream(client);
    frozen.startServing(CHAT_TOKENS.faulty, 'frozen');
    hostileService(frozen);
    await frozen.next((m) => m.body === 'serviceInfo');
    const call = client.processStream();
    const failed = new Promise<ClientResponseProto[]>((resolve) => {
      const got: ClientResponseProto[] = [];
      call.on('data', (m: ClientResponseProto) => got.push(m));
      call.on('error', () => resolve(got));
      call.on('end', () => resolve(got));
    });
    call.write({ account: 'demo', model: 'faulty', authToken: TEST_KEY, timeoutSec: 1, partialPredict: { data: json({ frozen: true }) } });
    const piece = json('y'.repeat(MiB - 64));
    let accepted = 0;
    const base = liveMiB();
    const until = Date.now() + 900; // within the call's 1 s deadline
    while (Date.now() < until) {
      accepted++;
      if (!call.write({ partialPredict: { data: piece } })) {
        const drained = await Promise.race([
          once(call, 'drain').then(() => true),
          new Promise((r) => setTimeout(r, until - Date.now(), false)),
        ]);
        if (!drained) break;
      }
    }
    const held = liveMiB() - base;
    figure('processStream to a frozen service, 1 MiB messages for 0.9 s: accepted', accepted, 'messages');
    figure('processStream to a frozen service: held', held);
    // Before: the gateway read on and held every message for the frozen service (+330 MB in 4 s).
    expect(accepted).toBeLessThan(64);
    expect(held).toBeLessThan(64);
    // The call's deadline (or the frozen service's missed heartbeats) ends it with a coded error.
    const messages = await failed;
    expect(['PREDICT_TIMEOUT', 'SERVICE_DISCONNECTED']).toContain(messages.at(-1)?.error?.code);
    call.cancel();
    frozen.cancel();
    await served();
  });
});
