/**
 * The SDK's channels advertise a 1 MiB HTTP/2 receive window (sdk/grpc.ts), per stream and for the
 * connection, so a large message from the gateway reaches a service in a few round trips instead of
 * 64 (a 4 MiB message took 16 ms instead of 4.3 ms between two cores; `npm run bench:window`). Seen
 * from the other end of a real connection: a plain HTTP/2 server reads what the SDK's client sent.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GateClient } from '../../sdk/index.js';
import { RECEIVE_WINDOW_BYTES } from '../../proto/src/index.js';
import { eventually } from '../support/gateway.js';

const cleanup: (() => unknown)[] = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).reverse()) fn();
});

describe('the SDK receive window', () => {
  it('is advertised for each stream (SETTINGS) and opened for the connection (WINDOW_UPDATE)', async () => {
    const sessions: http2.ServerHttp2Session[] = [];
    const server = http2.createServer();
    server.on('session', (session) => sessions.push(session));
    // Answers every call with a gRPC status, so the client completes its call.
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => server.close());
    const client = new GateClient({
      address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      authToken: 'k',
      account: 'a',
      model: 'm',
    });
    cleanup.push(() => client.close());

    await client.process({ predict: { data: { json: '{}' } } }).catch(() => undefined);
    await eventually(
      () => sessions.length === 1 && sessions[0]!.remoteSettings.initialWindowSize !== undefined,
      5000,
      'the client settings',
    );
    const session = sessions[0]!;
    // Before: 65,535, HTTP/2's default, for both.
    expect(session.remoteSettings.initialWindowSize).toBe(RECEIVE_WINDOW_BYTES);
    await eventually(() => session.state.remoteWindowSize! >= RECEIVE_WINDOW_BYTES, 5000, 'the connection window update');
    expect(RECEIVE_WINDOW_BYTES).toBe(1024 * 1024);
  });
});
