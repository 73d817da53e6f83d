import { describe, expect, it } from 'vitest';
import { explainSlowest, timelineTotals } from '../../bench/lib/slow-answers.js';

describe('bench --explain: what overlapped the slowest answers', () => {
  // 200 answers 5 ms apart, each 1 ms, but two that waited 40 and 30 ms.
  const answers = Array.from({ length: 200 }, (_, i) => ({ end: 1000 + i * 5 + 1, ms: 1 }));
  answers[100] = { end: 1000 + 100 * 5 + 40, ms: 40 };
  answers[150] = { end: 1000 + 150 * 5 + 30, ms: 30 };

  it('lists the slowest 1% (at least the given count), slowest first, with the events that overlap each wait', () => {
    const lines = explainSlowest(
      answers,
      {
        attacker: [{ kind: 'grpc-ext-max', start: 1490, end: 1510 }],
        gateway: [
          { kind: 'mark-compact', start: 1520, end: 1530 },
          { kind: 'stall', start: 1100, end: 1110 },
        ],
        echo: [],
      },
      2,
    );
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/the slowest 2 answers/);
    // Times are from the run's first request (sent at 1000): the 40 ms answer waited from 1500 to 1540.
    expect(lines[1]).toBe('        40.0 ms from 500: attacker grpc-ext-max 490-510; gateway mark-compact 520-530');
    expect(lines[2]).toBe('        30.0 ms from 750: nothing recorded');
  });

  it('takes 1% of a long run', () => {
    const many = Array.from({ length: 2000 }, (_, i) => ({ end: i, ms: i % 7 }));
    expect(explainSlowest(many, {}, 5)).toHaveLength(21);
    expect(explainSlowest([], {})).toEqual([]);
  });
});

describe('bench:attacks --timeline: a server timeline totalled by kind', () => {
  it("counts and sums each kind, a mark-compact's details left out, kinds in order", () => {
    const line = timelineTotals([
      { kind: 'stall', start: 0, end: 12 },
      { kind: 'mark-compact (external memory; heap 29 MB, external 11 MB after)', start: 20, end: 30 },
      { kind: 'stall', start: 40, end: 47.5 },
      { kind: 'mark-compact (idle; heap 28 MB, external 3 MB after)', start: 50, end: 54 },
    ]);
    expect(line).toBe('mark-compact 2× 14 ms (longest 10.0), stall 2× 20 ms (longest 12.0)');
    expect(timelineTotals([])).toBe('nothing recorded');
  });
});
