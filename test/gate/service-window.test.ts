/**
 * A registered service's connection gets a 1 MiB HTTP/2 receive window from the gateway
 * (core/grpc/service-window.ts), so a large answer crosses in a few round trips instead of 64; a peer
 * that has not registered keeps HTTP/2's 64 KiB. Seen from the service's end of a real connection, at
 * the HTTP/2 level: the SETTINGS the gateway sends and the connection window it opens.
 */
import type { ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECEIVE_WINDOW_BYTES, gateServiceDefinition } from '../../proto/src/index.js';
import { ECHO_TOKEN, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { wireCall, wireSession } from '../support/grpc-wire.js';

const PROCESS_ASYNC = gateServiceDefinition().processAsync!;
const DEFAULT_WINDOW = 65_535;

const startServing = (token: string) =>
  PROCESS_ASYNC.requestSerialize({
    startServing: { connectionToken: token, serviceDescriptor: { name: 'raw' }, hostname: 'raw-test' },
  }) as Buffer;

/** A session whose gateway SETTINGS have arrived. */
async function settledSession(address: string): Promise<ClientHttp2Session> {
  const session = wireSession(address);
  session.on('error', () => undefined);
  await new Promise((resolve) => session.once('remoteSettings', resolve));
  return session;
}

describe("a registered service's receive window", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(testConfigInput({ server: { httpPort: 0, grpcPort: 0 } }));
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('is widened once startServing is accepted, for its streams and its connection', async () => {
    const session = await settledSession(gw.grpcAddress);
    try {
      expect(session.remoteSettings.initialWindowSize).toBe(DEFAULT_WINDOW);
      void wireCall(session, PROCESS_ASYNC.path, startServing(ECHO_TOKEN), { keepOpen: true });
      await eventually(() => session.remoteSettings.initialWindowSize === RECEIVE_WINDOW_BYTES, 5000, 'the wider SETTINGS');
      // What the service may send on the connection before the gateway reads any of it.
      await eventually(() => session.state.remoteWindowSize! > RECEIVE_WINDOW_BYTES / 2, 5000, 'the connection window update');
    } finally {
      session.destroy();
    }
  });

  it('stays at the default for a peer whose startServing is refused', async () => {
    const session = await settledSession(gw.grpcAddress);
    try {
      const outcome = await wireCall(session, PROCESS_ASYNC.path, startServing('not-a-token'));
      const answer = PROCESS_ASYNC.responseDeserialize(outcome.messages[0]!) as { error?: { code?: string } };
      expect(answer.error?.code).toBe('platform.gate.instance_by_token_not_found');
      expect(session.remoteSettings.initialWindowSize).toBe(DEFAULT_WINDOW);
      expect(session.state.remoteWindowSize).toBeLessThanOrEqual(DEFAULT_WINDOW);
    } finally {
      session.destroy();
    }
  });
});
