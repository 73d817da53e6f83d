/**
 * The ceiling, and the OpenAI-compatible mock upstream of the peers and of the upstream connector: a
 * minimal Node HTTP server that drains any request and answers the fixed `chat.completion` body
 * (env BENCH_BODY) as JSON. Nothing is parsed; this is the most one Node process serves here.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { reportReady } from '../lib/procs.js';

const body = Buffer.from(process.env.BENCH_BODY ?? '{}');
const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };

const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  reportReady({ port: (server.address() as AddressInfo).port });
});
