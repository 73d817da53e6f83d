/**
 * The JSON shape scan a body gets as it arrives (core/validation/json.ts, JsonShapeCheck), timed on
 * three 1.2 MB bodies fed in 64 KiB chunks as a socket hands them over (`npm run bench:json-scan`):
 * the hostile bench's Responses flood (small items, all structure), long texts (prose), and texts
 * dense with escapes. Prints the median of `--runs` (15) scans per body, ms and MB/s. Compare two
 * versions of the code by running it in each checkout.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_JSON_MAX_DEPTH, JsonShapeCheck } from '../core/validation/json.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
const BYTES = 1_200_000;
const CHUNK = 64 * 1024;
/** Bounds that let every body through whole: the scan's speed, not its refusal, is measured. */
const size = { maxMembers: Infinity, maxArrayItems: Infinity };

function items(item: unknown): Buffer {
  const one = JSON.stringify(item);
  return Buffer.from(
    `{"model":"bench/echo","input":[${Array(Math.ceil(BYTES / (one.length + 1)))
      .fill(one)
      .join(',')}]}`,
  );
}

const bodies: Record<string, Buffer> = {
  'flood (small items)': items({ type: 'message', role: 'user', content: 'x' }),
  'prose (long texts)': items({ type: 'message', role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(400) }),
  'escapes (quotes, backslashes, newlines)': items({ type: 'message', content: 'a"b\\c\n'.repeat(200) }),
};

for (const [name, body] of Object.entries(bodies)) {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const check = new JsonShapeCheck(DEFAULT_JSON_MAX_DEPTH, size);
    const start = performance.now();
    for (let i = 0; i < body.length; i += CHUNK) check.push(body.subarray(i, i + CHUNK));
    times.push(performance.now() - start);
  }
  const median = times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
  const mbPerSecond = body.length / 1e3 / median;
  console.log(`${name.padEnd(40)} ${(body.length / 1e6).toFixed(2)} MB  ${median.toFixed(2)} ms  ${mbPerSecond.toFixed(0)} MB/s`);
}
