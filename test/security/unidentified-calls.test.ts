/**
 * Issue 25 (hostile tenants): gRPC calls that never send their first message. grpc-js waits for a
 * unary call's message forever and advertises no limit of concurrent streams, so one keyless
 * connection held as many calls open as it opened: 20,000 streams with no message took the demo
 * gateway's RSS from 133 to 268 MB, and 13 s later none was closed. Now the calls without their first
 * message are bounded gateway-wide (`server.unauthenticatedCalls`: past it a stream is reset with
 * REFUSED_STREAM) and in time (`server.firstMessageTimeoutMs`: DEADLINE_EXCEEDED with
 * FIRST_MESSAGE_TIMEOUT, then the stream is reset); service streams are not counted. Against a real
 * gateway over 127.0.0.1, with the attack at the HTTP/2 level.
 */
import { constants, type ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateServiceDefinition } from '../../proto/src/index.js';
import { ECHO_TOKEN, TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { wireCall, wireSession } from '../support/grpc-wire.js';
import { liveMiB } from '../support/memory-watch.js';
import { json, processUnary, rawClient, startOkService, type RawClient } from '../support/raw-gate-client.js';

const HELD = 64;
/**
 * Longer than the 3000 streams below take to open on a loaded machine: a held call that timed out
 * meanwhile would free its place for a later one (a CI run opened them in more than 1.5 s, 2026-11-28).
 */
const TIMEOUT_MS = 5000;
const PROCESS = gateServiceDefinition().process!.path;
const HEALTH_CHECK = gateServiceDefinition().healthCheck!.path;
const REFLECTION = '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo';
/** ServerReflectionRequest{list_services: "*"} (field 7). */
const LIST_SERVICES = Buffer.from([0x3a, 0x01, 0x2a]);

/** What became of a stream opened and left without a message. */
interface Left {
  rstCode?: number;
  status?: number;
  details: string;
  closed: boolean;
  /** Bytes of answer received. */
  answered: number;
}

/** Opens a call of `path` and sends nothing (or only `message`, framed): no more, no end. */
function leaveOpen(session: ClientHttp2Session, path: string, message?: Buffer): Left {
  const left: Left = { details: '', closed: false, answered: 0 };
  const stream = session.request(
    {
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: path,
      [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      te: 'trailers',
    },
    { endStream: false },
  );
  const read = (headers: Record<string, unknown>) => {
    if (headers['grpc-status'] !== undefined) left.status = Number(headers['grpc-status']);
    if (headers['grpc-message'] !== undefined) left.details = decodeURIComponent(String(headers['grpc-message']));
  };
  stream.on('response', read);
  stream.on('trailers', read);
  stream.on('error', () => undefined);
  stream.on('data', (chunk: Buffer) => (left.answered += chunk.length));
  if (message) {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(message.length, 1);
    stream.write(Buffer.concat([prefix, message]));
  }
  stream.on('close', () => {
    left.closed = true;
    if (stream.rstCode) left.rstCode = stream.rstCode;
  });
  return left;
}

describe('gRPC calls without their first message (issue 25)', () => {
  let gw: TestGateway;
  let client: RawClient;

  beforeAll(async () => {
    gw = await startTestGateway(
      testConfigInput({ server: { httpPort: 0, grpcPort: 0, unauthenticatedCalls: HELD, firstMessageTimeoutMs: TIMEOUT_MS } }),
    );
    client = rawClient(gw.grpcAddress);
  });
  afterAll(async () => {
    client?.close();
    await gw?.close();
  });

  it('holds at most server.unauthenticatedCalls of them, refuses the rest with REFUSED_STREAM, and answers the held ones FIRST_MESSAGE_TIMEOUT', async () => {
    const session = wireSession(gw.grpcAddress);
    try {
      const before = liveMiB();
      // Before the fix every one of these stayed open: 3000 held 20.6 MiB of live memory here (2.0 with the bound).
      const calls = Array.from({ length: 3000 }, (_, i) => leaveOpen(session, i % 10 === 0 ? HEALTH_CHECK : PROCESS));
      const refused = () => calls.filter((c) => c.rstCode === constants.NGHTTP2_REFUSED_STREAM);
      await eventually(() => refused().length >= calls.length - HELD, 20_000, 'the calls past the bound refused');
      expect(refused()).toHaveLength(calls.length - HELD);
      expect(calls.filter((c) => c.closed)).toHaveLength(calls.length - HELD);
      // What the gateway holds now: the bounded calls, not the 3000.
      expect(liveMiB() - before).toBeLessThan(8);

      // A service registers meanwhile: service streams do not count, and are bounded by their own registration time.
      const service = startOkService(client, ECHO_TOKEN, 'echo');
      try {
        await service.next((m) => m.body === 'serviceInfo');
        // The held calls time out with the coded status, and their streams end.
        await eventually(() => calls.every((c) => c.closed), 20_000, 'the held calls answered');
        const timedOut = calls.filter((c) => c.rstCode !== constants.NGHTTP2_REFUSED_STREAM);
        expect(timedOut).toHaveLength(HELD);
        for (const call of timedOut) {
          expect(call.status).toBe(4); // DEADLINE_EXCEEDED
          expect(call.details).toMatch(
            new RegExp(`^FIRST_MESSAGE_TIMEOUT: The call did not send its first message within ${TIMEOUT_MS} ms`),
          );
        }
        // Their places are free again: an authenticated caller is served.
        const res = await processUnary(client, { account: 'demo', model: 'echo', authToken: TEST_KEY, predict: { data: json({}) } });
        expect(res.error).toBeUndefined();
      } finally {
        service.close();
      }
    } finally {
      session.close();
    }
  });

  it('holds a server reflection stream, which no key admits, for its whole life and closes it when idle', async () => {
    // Before: one request bought a keyless peer a reflection stream for ever, as many as it opened.
    const session = wireSession(gw.grpcAddress);
    try {
      const streams = Array.from({ length: HELD }, () => leaveOpen(session, REFLECTION, LIST_SERVICES));
      await eventually(() => streams.every((s) => s.answered > 0), 10_000, 'the reflection answers');
      // Answered and still open, they hold every place: the next call is refused.
      const refused = leaveOpen(session, PROCESS);
      await eventually(() => refused.closed, 5000, 'the call past the bound refused');
      expect(refused.rstCode).toBe(constants.NGHTTP2_REFUSED_STREAM);
      expect(streams.some((s) => s.closed)).toBe(false);
      // Idle past the time, each is answered with the code and ends.
      await eventually(() => streams.every((s) => s.closed), 20_000, 'the idle reflection streams closed');
      for (const s of streams) {
        expect(s.status).toBe(4); // DEADLINE_EXCEEDED
        expect(s.details).toMatch(new RegExp(`^IDLE_CALL_TIMEOUT: The call sent no message for ${TIMEOUT_MS} ms`));
      }
    } finally {
      session.close();
    }
  });

  it('counts a message that stops midway as not sent, and lets a prompt one through at once', async () => {
    const session = wireSession(gw.grpcAddress);
    try {
      // A 100-byte message announced, 10 bytes of it sent: small enough to be taken whole, never finished.
      const stalled = wireCall(session, PROCESS, Buffer.alloc(10, 0x20), { announce: 100, partial: 10 });
      const keyed = gateServiceDefinition().process!.requestSerialize({
        account: 'demo',
        model: 'echo',
        authToken: TEST_KEY,
        predict: { data: json({}) },
      }) as Buffer;
      // The keyed call is answered by the gateway itself (no service is connected now), long before the stalled one.
      const prompt = await wireCall(session, PROCESS, keyed);
      expect(prompt.status).toBe(0);
      expect(prompt.messages).toHaveLength(1);
      const outcome = await stalled;
      expect(outcome.status).toBe(4);
      expect(outcome.details).toMatch(/^FIRST_MESSAGE_TIMEOUT: /);
    } finally {
      session.close();
    }
  });
});
