import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const LOOP_DELAY = fileURLToPath(new URL('../../bench/lib/loop-delay.mjs', import.meta.url));

/**
 * `npm run bench -- --explain` (bench/lib/loop-delay.mjs, BENCH_TIMELINE): each mark-compact in a
 * server's timeline says why V8 started it and the heap it left, which told the hostile bench's
 * gateway collections apart: started by external memory (Buffers), not by the heap's growth.
 */
it("names a mark-compact's reason and the heap it left in the server's timeline", async () => {
  // A forced full collection of a heap large enough to take over a millisecond (shorter ones are not kept).
  const program = `
    globalThis.kept = Array.from({ length: 300000 }, (_, i) => ({ i, text: 'x' + i }));
    globalThis.gc();
    process.send({ type: 'collected' });
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--expose-gc', '--import', LOOP_DELAY, '-e', program], {
    env: { ...process.env, BENCH_TIMELINE: '1' },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  try {
    type Message = { type: string; events?: { kind: string; start: number; end: number }[] };
    const message = (type: string) => new Promise<Message>((resolve) => child.on('message', (m: Message) => m.type === type && resolve(m)));
    await message('collected');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the observer's entries come after the collection
    const answer = message('timeline');
    child.send({ type: 'timeline' });
    const kinds = ((await answer).events ?? []).map((event) => event.kind);
    expect(kinds).toContainEqual(expect.stringMatching(/^mark-compact \(forced; heap \d+ MB, external \d+ MB after\)$/));
    // The loop-delay reading counts the mark-compacts since the last one, with or without a timeline.
    const reading = message('loop-delay') as Promise<Message & { markCompacts?: number }>;
    child.send({ type: 'loop-delay' });
    expect((await reading).markCompacts).toBeGreaterThanOrEqual(1);
  } finally {
    child.kill();
  }
});
