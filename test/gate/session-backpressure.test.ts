import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ServiceEntry } from '../../core/admission/directory.js';
import { silentLogger } from '../../core/observe/logger.js';
import { ServiceSession, type ServiceStream } from '../../core/gate/service-session.js';

/** A service stream whose transport takes one message and then waits until told to go on. */
function slowStream() {
  const pending: (() => void)[] = [];
  const stream = new Writable({
    objectMode: true,
    highWaterMark: 1,
    write(_m, _e, done) {
      pending.push(done);
    },
  });
  return { stream: stream as unknown as ServiceStream, flush: () => pending.splice(0).forEach((done) => done()) };
}

describe('service session back-pressure', () => {
  it('whenWritable waits while the stream is full and resolves once it drains', async () => {
    const { stream, flush } = slowStream();
    const session = new ServiceSession(stream, { id: 1, name: 'asr' } as ServiceEntry, {}, silentLogger());
    await session.whenWritable(); // empty: at once
    session.send({ requestId: 1, partialPredict: {} });
    session.send({ requestId: 1, partialPredict: {} });
    let resolved = false;
    const waiting = session.whenWritable().then(() => (resolved = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(resolved).toBe(false);
    flush();
    await new Promise((r) => setImmediate(r));
    flush();
    await waiting;
    expect(resolved).toBe(true);
  });

  it('does not hang on a stream that closes while full', async () => {
    const { stream } = slowStream();
    const session = new ServiceSession(stream, { id: 1, name: 'asr' } as ServiceEntry, {}, silentLogger());
    session.send({ requestId: 1, partialPredict: {} });
    session.send({ requestId: 1, partialPredict: {} });
    const waiting = session.whenWritable();
    (stream as unknown as Writable).destroy();
    await waiting;
  });
});
