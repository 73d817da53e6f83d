/**
 * The cheapest hop a gateway can be, for the streaming scenario's second baseline: a Node HTTP
 * server that forwards every request unchanged to BENCH_UPSTREAM (host:port) over a keep-alive
 * agent and pipes the answer back as it arrives. No parsing, no checks, no logging: what one more
 * process on the path costs on this machine, before any gateway logic.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { reportReady } from '../lib/procs.js';

const [host, port] = (process.env.BENCH_UPSTREAM ?? '127.0.0.1:80').split(':') as [string, string];
const agent = new http.Agent({ keepAlive: true });

const server = http.createServer((req, res) => {
  const upstream = http.request({ host, port: Number(port), method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  // A reader gone mid-stream stops the upstream; after a finished answer the socket goes back to the pool.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => reportReady({ port: (server.address() as AddressInfo).port }));
