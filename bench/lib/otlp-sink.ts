/**
 * An OTLP/HTTP sink on loopback for gateways with tracing on: it takes every export and answers 200,
 * counting exports and bytes (proof that spans left the gateway), as a collector would without
 * storing anything.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** The traces URL to give the gateway (`tracing.otlpEndpoint`). */
  readonly url: string;
  readonly received: { exports: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const received = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
    req.on('end', () => {
      received.exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
