/**
 * The authenticated attacker of the hostile scenario (#25 N1), as its own process: `BENCH_ATTACK_LOOPS`
 * loops, each sending back to back, in turn, with a valid key of its own account (`mallory`, or the key
 * `BENCH_ATTACK_KEY` names):
 *
 * - `grpc-ext-flood`: a 3.8 MB `Gate.process` ext call with 300,000 params entries (the N1 attack that
 *   gave other accounts a p99 of 3.0-5.3 s);
 * - `grpc-ext-max`: the largest ext call the limits allow, 1024 params of 4,000 bytes (decoded and
 *   sent to the service, which does not know the method);
 * - `http-ext-flood`: a 15 MB HTTP `…/ext` body with 1,000,000 entries (N1: most of 9 s of event loop);
 * - `http-responses`: a 30 MB Responses body of 620,000 `input` items (within the 32 MiB body limit).
 *
 * The messages of the kinds it sends are built once, before ready. Answers `stats` over IPC with the calls made, the
 * error codes the gateway answered (`<kind>: <code>`) and each finished call's kind and times.
 */
import { gateServiceDefinition } from '../../proto/src/index.js';
import { ATTACKER_KEY } from '../lib/config.js';
import { reportReady } from '../lib/procs.js';
import { attackerSession, framed, rawProcessCall } from '../lib/raw-grpc-call.js';
import type { TimedEvent } from '../lib/slow-answers.js';

const grpcTarget = process.env.BENCH_ATTACK_TARGET!;
const httpUrl = process.env.BENCH_ATTACK_HTTP!;
const loops = Number(process.env.BENCH_ATTACK_LOOPS ?? 2);

const method = gateServiceDefinition().process;
const key = process.env.BENCH_ATTACK_KEY ?? ATTACKER_KEY;
const head = { account: 'bench', model: 'echo', authToken: key };
let calls = 0;
const codes: Record<string, number> = {};
const count = (kind: string, code: string) => {
  calls++;
  codes[`${kind}: ${code}`] = (codes[`${kind}: ${code}`] ?? 0) + 1;
};

let session = open();
function open() {
  const opened = attackerSession(grpcTarget);
  opened.on('close', () => {
    if (session === opened) session = open();
  });
  return opened;
}

async function grpcCall(kind: string, message: Buffer): Promise<void> {
  if (session.closed || session.destroyed) session = open();
  count(kind, (await rawProcessCall(session, message)).code);
}

async function httpCall(kind: string, path: string, body: string): Promise<void> {
  try {
    const res = await fetch(`${httpUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'PLATFORM-API-KEY': key },
      body,
    });
    const text = await res.text();
    count(kind, /"code":"([A-Z_]+)"/.exec(text)?.[1] ?? `HTTP ${res.status}`);
  } catch (err) {
    count(kind, `failed: ${(err as Error).message}`);
  }
}

/** One kind's message, built, and how it is sent. */
interface Attack {
  bytes: number;
  send(): Promise<void>;
}
const grpcAttack = (kind: string, message: Buffer): Attack => ({ bytes: message.length, send: () => grpcCall(kind, message) });
const httpAttack = (kind: string, path: string, body: string): Attack => ({ bytes: body.length, send: () => httpCall(kind, path, body) });

/** A framed `Gate.process` ext call of the attacker's account with these params. */
const extCall = (params: [string, { json?: string }][]) =>
  framed(method.requestSerialize({ ...head, ext: { methodName: 'ping', params: Object.fromEntries(params) } }));

/** Each kind's attack. Only the kinds this run sends are built, before ready: the floods take seconds of CPU to build. */
const attackKinds: Record<string, (kind: string) => Attack> = {
  'grpc-ext-flood': (kind) =>
    grpcAttack(kind, extCall(Array.from({ length: 300_000 }, (_, i) => [`p${i.toString(36).padStart(5, '0')}`, {}]))),
  'grpc-ext-max': (kind) => grpcAttack(kind, extCall(Array.from({ length: 1024 }, (_, i) => [`p${i}`, { json: 'v'.repeat(4000) }]))),
  'http-ext-flood': (kind) =>
    httpAttack(
      kind,
      '/api/platformgate/account/bench/model/echo/ext',
      `{"methodName":"ping","params":{${Array.from({ length: 1_000_000 }, (_, i) => `"k${i}":"vv"`).join(',')}}}`,
    ),
  'http-responses': (kind) =>
    httpAttack(
      kind,
      '/api/adapters/chatapi/v1/responses',
      `{"model":"bench/echo","input":[${Array(620_000).fill('{"type":"message","role":"user","content":"x"}').join(',')}]}`,
    ),
};
// BENCH_ATTACK_KINDS (comma-separated) runs some of them only, to see what each costs.
const kinds = process.env.BENCH_ATTACK_KINDS?.split(',') ?? Object.keys(attackKinds);
const attacks = kinds.map((kind) => attackKinds[kind]!(kind));
const messageBytes = Math.max(...attacks.map((attack) => attack.bytes));

/** Each finished call, wall-clock ms, for `--explain` (the latest EVENTS_KEPT). */
const events: TimedEvent[] = [];
const EVENTS_KEPT = 10_000;
const now = () => performance.timeOrigin + performance.now();

let running = true;
for (let i = 0; i < loops; i++) {
  void (async () => {
    for (let n = i; running; n++) {
      const start = now();
      await attacks[n % attacks.length]!.send();
      events.push({ kind: kinds[n % attacks.length]!, start, end: now() });
      if (events.length > EVENTS_KEPT) events.shift();
    }
  })();
}
process.on('message', (m: { type?: string }) => {
  if (m.type === 'stats')
    process.send?.({
      type: 'stats',
      calls,
      wanted: kinds.length,
      kinds: new Set(Object.keys(codes).map((c) => c.split(':')[0])).size,
      codes,
      events,
      messageBytes,
    });
});
process.on('SIGTERM', () => {
  running = false;
  session.close();
  process.exit(0);
});
reportReady({ messageBytes });
