import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FastCounter, FastHistogram } from '../../plugins/metrics/fast-families.js';

/** The metrics plugin's own families must render exactly what prom-client's would for the same updates. */
describe('metrics: fast counter and histogram families', () => {
  // Sample lines, sorted, each with its labels sorted: prom-client puts `le` first, and label order carries no meaning.
  const lines = async (registry: Registry) =>
    (await registry.metrics())
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => {
        const [, name, labels, value] = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(l)!;
        return `${name}{${(labels ?? '')
          .split(/,(?=[a-z_]+=")/)
          .sort()
          .join(',')}} ${value}`;
      })
      .sort();

  it('renders the same histogram buckets, sums and counts as prom-client, bounds inclusive, odd label values escaped', async () => {
    const [ours, theirs] = [new Registry(), new Registry()];
    const fast = new FastHistogram({
      name: 'h_seconds',
      help: 'h',
      labelNames: ['route', 'service'],
      buckets: [0.001, 0.01, 1],
      registers: [ours],
    });
    const reference = new Histogram({
      name: 'h_seconds',
      help: 'h',
      labelNames: ['route', 'service'],
      buckets: [0.001, 0.01, 1],
      registers: [theirs],
    });
    const updates: [string, string, number][] = [
      ['/a', 'x/y', 0.0005],
      ['/a', 'x/y', 0.001],
      ['/a', 'x/y', 0.5],
      ['/b{/v1}', 'q"\\n', 7],
      ['/a', 'x/y', 0.01],
    ];
    for (const [route, service, value] of updates) {
      fast.observe([route, service], value);
      reference.observe({ route, service }, value);
    }
    expect(await lines(ours)).toEqual(await lines(theirs));
  });

  it('renders the same counter series as prom-client and starts again after reset', async () => {
    const [ours, theirs] = [new Registry(), new Registry()];
    const fast = new FastCounter({ name: 'c_total', help: 'c', labelNames: ['account', 'direction'], registers: [ours] });
    const reference = new Counter({ name: 'c_total', help: 'c', labelNames: ['account', 'direction'], registers: [theirs] });
    for (const [account, direction, by] of [
      ['a', 'input', 3],
      ['a', 'output', 5],
      ['b', 'input', 1],
      ['a', 'input', 2],
    ] as const) {
      fast.inc([account, direction], by);
      reference.inc({ account, direction }, by);
    }
    expect(await lines(ours)).toEqual(await lines(theirs));
    ours.resetMetrics();
    expect(await lines(ours)).toEqual([]);
  });
});
