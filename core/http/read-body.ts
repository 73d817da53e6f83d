import type { IncomingMessage } from 'node:http';
import { gatewayError, isGatewayError } from '../errors.js';

/**
 * A request body read whole, up to `limit` bytes, with `inspect` shown each chunk as it arrives: when
 * `inspect` throws, reading stops there (the stream is paused and left unread; the error answer closes
 * the connection, core/http/app.ts) and that error is the refusal. What raw-body does otherwise: a
 * Content-Length over the limit is refused before anything is read (413 REQUEST_TOO_LARGE), as are
 * more bytes than the limit; an aborted body or one shorter than its Content-Length is a 400.
 */
export function readBodyInspected(req: IncomingMessage, limit: number, inspect: (chunk: Buffer) => void): Promise<Buffer> {
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  if (declared !== undefined && declared > limit) return Promise.reject(gatewayError('REQUEST_TOO_LARGE', { args: { limit } }));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('close', onClose);
      req.off('error', onError);
    };
    const fail = (err: unknown) => {
      cleanup();
      req.pause();
      // Keeps a listener so that a later error of the unread stream (the caller resets) is not uncaught.
      req.on('error', () => undefined);
      reject(
        isGatewayError(err)
          ? err
          : gatewayError('VALIDATION_FAILED', { args: { reason: `request body could not be read: ${(err as Error).message}` } }),
      );
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) return fail(gatewayError('REQUEST_TOO_LARGE', { args: { limit } }));
      try {
        inspect(chunk);
      } catch (err) {
        return fail(err);
      }
      chunks.push(chunk);
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
