/**
 * `npm run bench -- --only hostile --explain`: what was going on while the slowest answers of a run
 * waited. Each of the slowest 1% of the victim's answers (those that set its p99) is printed with the
 * events that overlap its wait: the attacker's calls (by kind) and, from each server's timeline
 * (bench/lib/loop-delay.mjs with BENCH_TIMELINE), its event-loop stalls and garbage collections. A
 * ratio says that the attacker costs; this says which of its calls, and in which process.
 */
import type { TimedAnswer } from './load.js';

/** Something that took time, wall-clock ms: an attacker's call, a server's stall or collection. */
export interface TimedEvent {
  kind: string;
  start: number;
  end: number;
}

/** The events of one source, under a short name (`attacker`, `gateway`, `echo`). */
export type EventSources = Record<string, readonly TimedEvent[]>;

/** The slowest 1% of `answers` (at least `least`), slowest first, each with the events overlapping its wait. */
export function explainSlowest(answers: readonly TimedAnswer[], sources: EventSources, least = 5): string[] {
  if (answers.length === 0) return [];
  const origin = answers[0]!.end - answers[0]!.ms;
  const at = (t: number) => (t - origin).toFixed(0);
  const slowest = [...answers].sort((a, b) => b.ms - a.ms).slice(0, Math.max(least, Math.ceil(answers.length / 100)));
  const lines = [`      the slowest ${slowest.length} answers (times in ms from the run's first request):`];
  for (const answer of slowest) {
    const start = answer.end - answer.ms;
    const overlapping = Object.entries(sources).flatMap(([source, events]) =>
      events.filter((e) => e.start <= answer.end && e.end >= start).map((e) => `${source} ${e.kind} ${at(e.start)}-${at(e.end)}`),
    );
    lines.push(`        ${answer.ms.toFixed(1)} ms from ${at(start)}: ${overlapping.join('; ') || 'nothing recorded'}`);
  }
  return lines;
}

/** A timeline's events by kind (a mark-compact's details left out): how many, their time, the longest. */
export function timelineTotals(events: readonly TimedEvent[]): string {
  const byKind = new Map<string, { count: number; ms: number; longest: number }>();
  for (const event of events) {
    const kind = event.kind.replace(/ \(.*$/, '');
    const total = byKind.get(kind) ?? { count: 0, ms: 0, longest: 0 };
    const ms = event.end - event.start;
    byKind.set(kind, { count: total.count + 1, ms: total.ms + ms, longest: Math.max(total.longest, ms) });
  }
  if (byKind.size === 0) return 'nothing recorded';
  return [...byKind]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, t]) => `${kind} ${t.count}× ${t.ms.toFixed(0)} ms (longest ${t.longest.toFixed(1)})`)
    .join(', ');
}
