/**
 * The partialPredict requests of one gateway stream whose answer is already given while the gateway
 * may still send them input (their handler returned or threw before the input's finish, or the
 * service refused them while draining): later chunks of such a request are dropped, never taken for
 * a new request. A gateway stops sending a request's input once it has the answer, so the finish that
 * would forget an entry may never come: the oldest entries are forgotten past `limit`, by which time
 * no chunk sent before its answer is still on the way.
 */
export class EndedStreams {
  readonly #ids = new Set<number>();
  readonly #limit: number;

  constructor(limit = 1024) {
    this.#limit = limit;
  }

  get size(): number {
    return this.#ids.size;
  }

  add(requestId: number): void {
    this.#ids.add(requestId);
    // A Set iterates in insertion order: its first entry is the oldest.
    if (this.#ids.size > this.#limit) this.#ids.delete(this.#ids.values().next().value!);
  }

  has(requestId: number): boolean {
    return this.#ids.has(requestId);
  }

  delete(requestId: number): void {
    this.#ids.delete(requestId);
  }

  clear(): void {
    this.#ids.clear();
  }
}
