import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamPacer, TURN_BYTES } from '../../core/flow/byte-rate.js';
import { readBodyInspected } from '../../core/http/read-body.js';

/** A stream that records its pauses and resumes. */
function fakeStream() {
  const calls: string[] = [];
  return { calls, destroyed: false, pause: () => calls.push('pause'), resume: () => calls.push('resume') };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const KiB = 1024;

describe('StreamPacer: a paced reader lets the event loop turn every TURN_BYTES', () => {
  it('pauses after TURN_BYTES read at once and resumes on the next turn, while its rate holds', async () => {
    const stream = fakeStream();
    const pacer = new StreamPacer(stream, () => 0, TURN_BYTES);
    pacer.took(TURN_BYTES / 2);
    pacer.took(TURN_BYTES / 2 - 1);
    expect(stream.calls).toEqual([]);
    pacer.took(1);
    expect(stream.calls).toEqual(['pause']);
    await nextTurn();
    expect(stream.calls).toEqual(['pause', 'resume']);
    // The count starts again after the turn.
    pacer.took(TURN_BYTES - 1);
    expect(stream.calls).toEqual(['pause', 'resume']);
  });

  it("leaves a pause for the rate to the rate's timer", async () => {
    const stream = fakeStream();
    let wait = 0;
    const pacer = new StreamPacer(stream, () => wait, TURN_BYTES);
    pacer.took(TURN_BYTES);
    wait = 30;
    pacer.took(KiB);
    await nextTurn();
    expect(stream.calls).toEqual(['pause', 'pause']);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(stream.calls).toEqual(['pause', 'pause', 'resume']);
  });

  it('stop(true) resumes a stream waiting for the next turn, once', async () => {
    const stream = fakeStream();
    const pacer = new StreamPacer(stream, () => 0, TURN_BYTES);
    pacer.took(TURN_BYTES);
    pacer.stop(true);
    await nextTurn();
    expect(stream.calls).toEqual(['pause', 'resume']);
  });
});

/**
 * #25, the hostile bench's rotating attacker: an account whose rate bucket was full had the first
 * 1.2 MB of its 30 MB Responses body read and JSON-scanned in one run of the event loop (libuv reads up
 * to 2 MiB of a ready socket per wake-up), and other accounts' answers waited 6-21 ms behind each such
 * run. Here a body sent at once over loopback, read within its account's rate: no more than TURN_BYTES
 * and one chunk are handed over between two turns of the loop (before, the whole burst the socket held).
 */
describe('a body read within its rate, over a real socket', () => {
  let server: Server;
  let turnsSeen = 0;
  let largestRun = 0;
  let bodyBytes = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let turn = 0;
      let running = true;
      const tick = () => {
        turn++;
        if (running) setImmediate(tick);
      };
      setImmediate(tick);
      let runTurn = -1;
      let run = 0;
      const unlimited = Object.assign(() => 0, { owed: () => 0 });
      const inspect = (chunk: Buffer) => {
        if (turn !== runTurn) {
          runTurn = turn;
          run = 0;
        }
        run += chunk.length;
        largestRun = Math.max(largestRun, run);
      };
      void readBodyInspected(req, 64 * 1024 * 1024, inspect, { pace: unlimited }).then((body) => {
        running = false;
        turnsSeen = turn;
        bodyBytes = body.length;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('hands the reader at most TURN_BYTES and one chunk per turn of the event loop', async () => {
    const body = Buffer.alloc(16 * 1024 * 1024, 0x61);
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(bodyBytes).toBe(body.length);
    expect(turnsSeen).toBeGreaterThanOrEqual(body.length / (TURN_BYTES + 64 * KiB));
    expect(largestRun).toBeLessThanOrEqual(TURN_BYTES + 64 * KiB);
  });
});
