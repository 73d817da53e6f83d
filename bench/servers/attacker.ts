/**
 * The unauthenticated gRPC attacker of scenario 9 (#15 "Broken"), as its own process so that its CPU
 * is not the load generator's: `BENCH_ATTACK_LOOPS` loops, each sending `Gate.process` calls whose one
 * message is the largest the gateway's client limits allow (`BENCH_ATTACK_BYTES`, default 4 MiB, with
 * `BENCH_ATTACK_HEADERS` headers entries of `BENCH_ATTACK_HEADER_BYTES` bytes in all) and no authToken,
 * back to back over raw HTTP/2 (the framed message is built once). Answers `stats` over IPC with the
 * calls made and the error codes the gateway answered.
 */
import { gateServiceDefinition } from '../../proto/src/index.js';
import { reportReady } from '../lib/procs.js';
import { attackerSession, framed, rawProcessCall } from '../lib/raw-grpc-call.js';

const target = process.env.BENCH_ATTACK_TARGET!;
const loops = Number(process.env.BENCH_ATTACK_LOOPS ?? 4);
const messageBytes = Number(process.env.BENCH_ATTACK_BYTES ?? 4 * 1024 * 1024);
const headerCount = Number(process.env.BENCH_ATTACK_HEADERS ?? 64);
const headerBytes = Number(process.env.BENCH_ATTACK_HEADER_BYTES ?? 16 * 1024);

const method = gateServiceDefinition().process;
// Headers at the cap: each entry costs its key and value plus 7 bytes of framing.
const valueBytes = Math.max(1, Math.floor(headerBytes / headerCount) - 16);
const headers = Object.fromEntries(
  Array.from({ length: headerCount }, (_, i) => [`h${String(i).padStart(4, '0')}`, 'v'.repeat(valueBytes)]),
);
const shell = method.requestSerialize({ account: 'bench', model: 'echo', headers, predict: { data: { json: '' } } });
const json = JSON.stringify('x'.repeat(Math.max(0, messageBytes - shell.length - 16)));
const message = method.requestSerialize({ account: 'bench', model: 'echo', headers, predict: { data: { json } } });
const framedMessage = framed(message);

let calls = 0;
const codes: Record<string, number> = {};
/** The attacker's connection, opened again when the gateway ends it (GOAWAY), as a real attacker would. */
let session = open();
function open() {
  const opened = attackerSession(target);
  // The gateway sends GOAWAY to a peer whose streams it keeps refusing: connect again.
  opened.on('goaway', () => {
    if (session === opened) session = open();
  });
  opened.on('close', () => {
    if (session === opened) session = open();
  });
  return opened;
}

async function once(): Promise<void> {
  if (session.closed || session.destroyed) session = open();
  const used = session;
  const { code, resetWithoutStatus } = await rawProcessCall(used, framedMessage);
  // Reset without an answer: the gateway has stopped taking this connection's streams (Node's
  // HTTP/2 server calms a peer that keeps sending on streams it reset). Connect again.
  if (resetWithoutStatus) {
    if (session === used) session = open();
    used.destroy();
  }
  calls++;
  codes[code] = (codes[code] ?? 0) + 1;
}

let running = true;
for (let i = 0; i < loops; i++) {
  void (async () => {
    while (running) await once();
  })();
}
process.on('message', (m: { type?: string }) => {
  if (m.type === 'stats')
    process.send?.({ type: 'stats', calls, codes, messageBytes: message.length, headerCount, headerBytes: valueBytes * headerCount });
});
process.on('SIGTERM', () => {
  running = false;
  session.close();
  process.exit(0);
});
reportReady({ messageBytes: message.length });
