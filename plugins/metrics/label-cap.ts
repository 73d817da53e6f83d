/**
 * Bounds the values one label may take: the first `max` distinct values are kept as they are, any
 * later one becomes `other`. Services created at run time (derived services) and accounts cannot
 * grow the metrics without bound this way.
 */
export class LabelCap {
  readonly #seen = new Set<string>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  value(value: string | undefined): string {
    if (value === undefined || value === '') return 'none';
    if (this.#seen.has(value)) return value;
    if (this.#seen.size >= this.#max) return 'other';
    this.#seen.add(value);
    return value;
  }
}
