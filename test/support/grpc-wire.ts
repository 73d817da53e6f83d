/**
 * A gRPC caller at the HTTP/2 level, for attacks a gRPC library would not make: it can announce a
 * message of any length and stream filler bytes for it from one small buffer (so the attacker itself
 * holds no memory and the measured memory is the gateway's), and it reports the raw outcome: the
 * in-band messages, grpc-status and grpc-message.
 */
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';

export interface WireOutcome {
  /** The response messages' bytes (gRPC length prefixes removed). */
  messages: Buffer[];
  /** grpc-status from the trailers (or headers of a trailers-only answer); undefined on a reset. */
  status: number | undefined;
  details: string;
  /** Bytes of the announced message this side managed to write before the call ended. */
  sent: number;
}

export function wireSession(address: string): ClientHttp2Session {
  return connect(`http://${address}`);
}

/**
 * One call of `method` (`/com.platform.gate.Gate/process`) whose single message is `message`, or, with
 * `announce`, a message of `announce` bytes whose body is `message` followed by filler bytes. With
 * `partial`, only that many bytes of the message are sent and the stream is left open (a peer that
 * makes the gateway hold a message it never finishes).
 */
export function wireCall(
  session: ClientHttp2Session,
  method: string,
  message: Buffer,
  options: { announce?: number; keepOpen?: boolean; partial?: number; onStream?: (stream: ClientHttp2Stream) => void } = {},
): Promise<WireOutcome> {
  const length = options.announce ?? message.length;
  return new Promise((resolve) => {
    const stream = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: method,
      [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      te: 'trailers',
    });
    options.onStream?.(stream);
    let status: number | undefined;
    let details = '';
    let sent = 0;
    let pending = Buffer.alloc(0);
    const messages: Buffer[] = [];
    const readStatus = (headers: Record<string, unknown>) => {
      if (headers['grpc-status'] !== undefined) status = Number(headers['grpc-status']);
      if (headers['grpc-message'] !== undefined) details = decodeURIComponent(String(headers['grpc-message']));
    };
    stream.on('response', readStatus);
    stream.on('trailers', readStatus);
    stream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
        const size = pending.readUInt32BE(1);
        messages.push(pending.subarray(5, 5 + size));
        pending = pending.subarray(5 + size);
      }
    });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve({ messages, status, details, sent });
    };
    stream.on('close', finish);
    stream.on('error', finish);

    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(length, 1);
    const filler = Buffer.alloc(64 * 1024, 0x20);
    void (async () => {
      const write = (chunk: Buffer) =>
        new Promise<boolean>((ok) => {
          if (stream.destroyed || stream.closed) return ok(false);
          sent += chunk.length;
          if (stream.write(chunk)) return ok(true);
          const go = () => {
            stream.off('drain', go);
            stream.off('close', go);
            ok(!stream.destroyed);
          };
          stream.once('drain', go);
          stream.once('close', go);
        });
      if (!(await write(prefix)) || !(await write(message))) return;
      sent -= 5;
      for (let left = (options.partial ?? length) - message.length; left > 0; left -= filler.length) {
        if (!(await write(left >= filler.length ? filler : filler.subarray(0, left)))) return;
      }
      if (!options.keepOpen && options.partial === undefined && !stream.destroyed) stream.end();
    })();
  });
}
