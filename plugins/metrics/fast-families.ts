import type { Metric, Registry } from 'prom-client';

/**
 * Counter and histogram families for the per-request metrics, registered in a prom-client registry
 * and rendered by it (text, and summed across workers by its AggregatorRegistry), but updated
 * without prom-client's per-call work. prom-client hashes the labels object and validates every
 * label name on each `inc` and `observe`: about 1.5 µs each, seven of them per chat request, which
 * with the event plumbing cost the metrics plugin 12-25% of the gateway's throughput (npm run
 * bench:costs). Here a series is found by its label values joined into one key, and a histogram
 * observation is one bucket increment; the cumulative buckets are built at scrape time.
 */
abstract class Family<S> {
  readonly name: string;
  readonly help: string;
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames: readonly string[];
  protected readonly series = new Map<string, { labels: Record<string, string>; state: S }>();

  constructor(config: { name: string; help: string; labelNames?: readonly string[]; registers: Registry[] }) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames ?? [];
    // prom-client's types name its own four classes; a registry renders anything with its shape (get/reset/name/help/type).
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  protected abstract fresh(): S;

  /** The series of `values` (in `labelNames` order). */
  protected stateOf(values: readonly string[]): S {
    const key = values.length === 1 ? values[0]! : values.join('\u0001');
    let entry = this.series.get(key);
    if (!entry) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      entry = { labels, state: this.fresh() };
      this.series.set(key, entry);
    }
    return entry.state;
  }

  reset(): void {
    this.series.clear();
  }
}

export class FastCounter extends Family<{ value: number }> {
  readonly type = 'counter';

  protected fresh() {
    return { value: 0 };
  }

  inc(values: readonly string[], by = 1): void {
    this.stateOf(values).value += by;
  }

  get() {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.series.values()].map(({ labels, state }) => ({ labels, value: state.value })),
    });
  }
}

interface HistogramState {
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class FastHistogram extends Family<HistogramState> {
  readonly type = 'histogram';
  readonly #bounds: readonly number[];

  constructor(config: { name: string; help: string; labelNames?: readonly string[]; buckets: readonly number[]; registers: Registry[] }) {
    super(config);
    this.#bounds = [...config.buckets].sort((a, b) => a - b);
  }

  protected fresh(): HistogramState {
    return { counts: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
  }

  observe(values: readonly string[], value: number): void {
    const state = this.stateOf(values);
    let bucket = 0;
    while (bucket < this.#bounds.length && value > this.#bounds[bucket]!) bucket++;
    state.counts[bucket]! += 1;
    state.sum += value;
    state.count += 1;
  }

  get() {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    for (const { labels, state } of this.series.values()) {
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += state.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: state.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: state.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: state.count });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}
