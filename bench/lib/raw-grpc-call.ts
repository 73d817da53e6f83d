import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { gateServiceDefinition, type ClientResponseProto } from '../../proto/src/index.js';

const method = gateServiceDefinition().process;

/** A message with its 5-byte gRPC prefix (uncompressed), as rawProcessCall sends it. */
export function framed(message: Buffer): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

/**
 * An attacker's HTTP/2 session to the gateway at `target` (`host:port`), its errors left to its calls.
 * Loops of 4 MiB messages queue more than Node's default 10 MB of session memory, past which Node
 * refuses the session's new streams itself (RST_STREAM ENHANCE_YOUR_CALM, never sent to the gateway);
 * grpc-js lifts the limit for its clients the same way.
 */
export function attackerSession(target: string): ClientHttp2Session {
  const session = connect(`http://${target}`, { maxSessionMemory: 1024 });
  session.on('error', () => undefined);
  return session;
}

/** How the gateway answered one raw `Gate.process` call: its error code (or `answered`), and whether the stream was reset without a status. */
export interface RawCallOutcome {
  code: string;
  resetWithoutStatus: boolean;
}

/**
 * One `Gate.process` call of the bench's attackers over raw HTTP/2, its message already framed (the
 * 5-byte gRPC prefix included): a refusal before the message was read is a status whose details start
 * with the error code; an in-band answer carries it in `error.code`.
 */
export function rawProcessCall(session: ClientHttp2Session, framed: Buffer): Promise<RawCallOutcome> {
  return new Promise((resolve) => {
    const stream = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: method.path,
      [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      te: 'trailers',
    });
    const chunks: Buffer[] = [];
    let status = '';
    let details = '';
    const read = (h: Record<string, unknown>) => {
      status = String(h['grpc-status'] ?? status);
      details = h['grpc-message'] === undefined ? details : decodeURIComponent(String(h['grpc-message']));
    };
    stream.on('response', read);
    stream.on('trailers', read);
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('close', () => {
      const body = Buffer.concat(chunks);
      let code = /^([A-Z_]+): /.exec(details)?.[1] ?? `grpc-status ${status || 'none'}`;
      if (body.length > 5)
        code = (method.responseDeserialize(body.subarray(5, 5 + body.readUInt32BE(1))) as ClientResponseProto).error?.code ?? 'answered';
      resolve({ code, resetWithoutStatus: !status && Boolean(stream.rstCode) });
    });
    stream.on('error', () => undefined);
    stream.end(framed);
  });
}
