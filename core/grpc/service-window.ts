import { RECEIVE_WINDOW_BYTES } from '../../proto/src/index.js';
import { callInternals, callOfStream } from './grpc-call-internals.js';

/**
 * Widens the HTTP/2 receive window of the connection that carries a registered service's stream (the
 * handler's stream object) from HTTP/2's 64 KiB to RECEIVE_WINDOW_BYTES, for the connection and each
 * of its streams, so a large answer crosses in a few round trips. Before registration the peer is
 * unauthenticated and keeps the default: the window is what it may send the gateway unread, and the
 * small window is how paced callers and unregistered streams are made to wait.
 */
export function widenServiceWindow(handlerStream: object): void {
  const session = callInternals(callOfStream(handlerStream)).stream?.session;
  if (!session || session.destroyed || session.closed) return;
  session.setLocalWindowSize(RECEIVE_WINDOW_BYTES);
  // SETTINGS_INITIAL_WINDOW_SIZE also widens the streams already open (RFC 9113 section 6.9.2).
  session.settings({ initialWindowSize: RECEIVE_WINDOW_BYTES });
}
