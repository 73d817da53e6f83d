/**
 * The caller account of the last `size` requests of a Gate, so that a billing charge naming its
 * request is booked to the caller. Request IDs are the Gate's own sequence, so a ring indexed by
 * the ID keeps exactly the most recent ones with no allocation per request. (A Map with its oldest
 * entry deleted on each insert cost about 7 µs per request: V8 walks the deleted entries at the
 * start of the table to find the next oldest.)
 */
export class RecentCallers {
  readonly #requestIds: Float64Array;
  readonly #accountIds: Float64Array;

  constructor(size: number) {
    this.#requestIds = new Float64Array(size).fill(-1);
    this.#accountIds = new Float64Array(size);
  }

  remember(requestId: number, accountId: number): void {
    const slot = requestId % this.#requestIds.length;
    this.#requestIds[slot] = requestId;
    this.#accountIds[slot] = accountId;
  }

  /** The account of `requestId`, while it is among the most recent. */
  accountOf(requestId: number): number | undefined {
    const slot = requestId % this.#requestIds.length;
    return this.#requestIds[slot] === requestId ? this.#accountIds[slot] : undefined;
  }
}
