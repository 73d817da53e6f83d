import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamPacer, TURN_BYTES } from '../flow/byte-rate.js';

/** How long a connection whose refused body was not drained stays half-closed before it is destroyed. */
const CLOSE_GRACE_MS = 2000;
/** How long a refused body may take to drain before the connection is closed anyway. */
const DRAIN_WAIT_MS = 10_000;

const draining = new WeakSet<IncomingMessage>();

/** Whether the rest of `req`'s refused body is being drained (the drain then decides when the connection closes). */
export function isDraining(req: IncomingMessage): boolean {
  return draining.has(req);
}

export interface DrainOptions {
  /** The refusal's response: the connection is closed only once it is sent. */
  res: ServerResponse;
  /** Bytes of the rest of the body read and dropped at most (`server.refusedBodyDrainBytes`). */
  maxBytes: number;
  /** Charges bytes read to the caller's input rate; ms to pause before reading more (core/flow/byte-rate.ts). */
  pace?: (bytes: number) => number;
}

/**
 * The rest of a body the gateway refused before reading it all (413 mid-upload, or a Content-Length
 * over the limit), read and dropped so that the client reads the refusal: closing a socket whose
 * peer is still sending makes the kernel answer with a reset, and the client then loses the answer
 * it had not read yet (the bench's attacker saw `fetch failed` instead of the 413). Up to `maxBytes`
 * are read (at the caller's input rate); a body that ends within them leaves the connection open for
 * the next request. Past them, or after DRAIN_WAIT_MS, reading stops and the connection is closed
 * once the answer is sent: half-closed first (the client reads the answer and the end), destroyed
 * CLOSE_GRACE_MS later.
 */
export function drainRefusedBody(req: IncomingMessage, { res, maxBytes, pace }: DrainOptions): void {
  if (req.complete || req.destroyed) return;
  draining.add(req);
  let drained = 0;
  const pacer = pace && new StreamPacer(req, pace, TURN_BYTES);
  const done = () => {
    draining.delete(req);
    pacer?.stop();
    clearTimeout(bound);
    req.off('data', onData);
    req.off('end', done);
    req.off('close', done);
  };
  const close = () => {
    done();
    req.pause();
    const socket = req.socket;
    let ended = false;
    const end = () => {
      if (ended || socket.destroyed) return;
      ended = true;
      socket.end();
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    };
    if (res.writableFinished) end();
    else res.once('finish', end).once('close', end);
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes) return close();
    pacer?.took(chunk.length);
  };
  const bound = setTimeout(close, DRAIN_WAIT_MS).unref();
  // A reset from the client ends the drain; it must not be an uncaught error.
  req.on('error', () => undefined);
  req.on('data', onData);
  req.once('end', done);
  req.once('close', done);
  req.resume();
}
