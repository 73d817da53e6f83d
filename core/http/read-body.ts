import type { IncomingMessage, ServerResponse } from 'node:http';
import { gatewayError, isGatewayError } from '../errors.js';
import { StreamPacer, TURN_BYTES, type InputCharge } from '../flow/byte-rate.js';
import { drainRefusedBody } from './body-drain.js';

export interface BodyReadOptions {
  /**
   * Charges bytes just read to the caller's account (`limits.inputBytesPerSecondPerAccount`) and says
   * how long to pause before reading more: the body then waits in the socket, and its sender with it.
   */
  pace?: InputCharge;
  /** A refused body's rest is drained (body-drain.ts) so that the client reads the refusal. */
  drain?: { res: ServerResponse; maxBytes: number };
}

/**
 * A request body read whole, up to `limit` bytes, with `inspect` shown each chunk as it arrives: when
 * `inspect` throws, reading stops there and that error is the refusal; the rest of the body is drained
 * (`options.drain`) or left unread (the error answer then closes the connection, core/http/app.ts).
 * What raw-body does otherwise: a Content-Length over the limit is refused before anything is read
 * (413 REQUEST_TOO_LARGE), as are more bytes than the limit; an aborted body or one shorter than its
 * Content-Length is a 400. With `options.pace`, reading pauses whenever the caller's input rate says so.
 */
export function readBodyInspected(
  req: IncomingMessage,
  limit: number,
  inspect: (chunk: Buffer) => void,
  options: BodyReadOptions = {},
): Promise<Buffer> {
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  // A refused body's announced rest is charged to the caller's rate at once, whether or not it is
  // sent: a client that reads the refusal early and drops its upload (Node's fetch does) would
  // otherwise go straight on to its next body, and the bench's attacker spent 120 ms of its own CPU
  // per 30 MB body refused after its first 1.2 MB, 2.5 times a second. Its next large body then waits.
  // A body without a Content-Length is charged as it is drained. At most the body limit is charged, so
  // a wild Content-Length costs its sender a few seconds of its rate, not hours. A rest charged at once
  // is drained as the account pays for it (paused while it owes, not charged again): read at full speed,
  // the bench's refused 30 MB Responses bodies cost the gateway about 280 ms of CPU each in one burst.
  // The account's next body also waits until the rest is paid for (below).
  const refuseRest = (received: number) => {
    const rest = declared === undefined ? 0 : Math.min(limit, Math.max(0, declared - received));
    const pace = options.pace;
    if (rest > 0) pace?.(rest);
    if (options.drain) drainRefusedBody(req, { ...options.drain, pace: pace && rest > 0 ? () => pace.owed() : pace });
  };
  if (declared !== undefined && declared > limit) {
    refuseRest(0);
    return Promise.reject(gatewayError('REQUEST_TOO_LARGE', { args: { limit } }));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const pacer = options.pace && new StreamPacer(req, options.pace, TURN_BYTES);
    // An account that owes its rate (earlier bodies, a refused body's announced rest) waits before any
    // byte of this body is read, its first free 16 KiB included: a flood refused within those bytes
    // went straight on to the next one (the bench's 15 MB ext bodies, 15 a second), its debt unpaid.
    // (A stream paused before its 'data' listener is attached stays paused until the pacer resumes it.)
    if (options.pace) pacer!.hold(options.pace.owed());
    const cleanup = () => {
      pacer?.stop();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('close', onClose);
      req.off('error', onError);
    };
    const fail = (err: unknown, refused = false) => {
      cleanup();
      req.pause();
      // Keeps a listener so that a later error of the unread stream (the caller resets) is not uncaught.
      req.on('error', () => undefined);
      if (refused) refuseRest(received);
      reject(
        isGatewayError(err)
          ? err
          : gatewayError('VALIDATION_FAILED', { args: { reason: `request body could not be read: ${(err as Error).message}` } }),
      );
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) return fail(gatewayError('REQUEST_TOO_LARGE', { args: { limit } }), true);
      try {
        inspect(chunk);
      } catch (err) {
        return fail(err, true);
      }
      chunks.push(chunk);
      pacer?.took(chunk.length);
    };
    const onEnd = () => {
      cleanup();
      if (declared !== undefined && received !== declared) {
        reject(
          gatewayError('VALIDATION_FAILED', {
            args: { reason: 'request body could not be read: request size did not match content length' },
          }),
        );
        return;
      }
      resolve(Buffer.concat(chunks, received));
    };
    const onAborted = () => fail(new Error('request aborted'));
    const onClose = () => {
      if (!req.complete) fail(new Error('request aborted'));
    };
    const onError = (err: Error) => fail(err);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('close', onClose);
    req.on('error', onError);
  });
}
