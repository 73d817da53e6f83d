import type { Http2Stream } from 'node:http2';

/**
 * The gateway's HTTP/2 receive window on a registered service's connection (each stream's and the
 * connection's), widened from HTTP/2's 64 KiB once its `startServing` is accepted. Every answer
 * behind a large one on the service's one stream waits until it has crossed, and at 64 KiB a 4 MiB
 * answer crosses in 64 round trips of window updates: receiving it cost a grpc-js server 10.7 ms of
 * CPU and 17.0 ms of wall time with the sender on another core, 6.0 and 7.3 ms with 1 MiB
 * (`npm run bench:window`; the SDK's channels receive with the same window). Before registration the
 * peer is unauthenticated and keeps the default: the window is what it may send the gateway unread,
 * and the small window is how paced callers and unregistered streams are made to wait.
 */
export const SERVICE_RECEIVE_WINDOW_BYTES = 1024 * 1024;

/** Widens the receive window of the connection that carries `stream`; false when it has none (closed). */
export function widenServiceWindow(stream: Http2Stream | undefined): boolean {
  const session = stream?.session;
  if (!session || session.destroyed || session.closed) return false;
  session.setLocalWindowSize(SERVICE_RECEIVE_WINDOW_BYTES);
  // SETTINGS_INITIAL_WINDOW_SIZE also widens the streams already open (RFC 9113 section 6.9.2).
  session.settings({ initialWindowSize: SERVICE_RECEIVE_WINDOW_BYTES });
  return true;
}
