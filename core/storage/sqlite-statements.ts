import type { DatabaseSyncInstance, StatementSyncInstance } from '@photostructure/sqlite';

/**
 * The embedded home's prepared statements, kept by their SQL text (the most recently used `max`).
 * Preparing parses and plans the SQL every time: 5-17 µs measured, where a lookup by ID then runs in
 * 1 µs. A query's text comes from its filter's shape, its values being parameters, so a gateway uses
 * a few dozen; the bound keeps shapes that vary (an `$in` of each length) from growing it without end.
 * SQLite prepares a kept statement again by itself when the schema changes (an index added or dropped).
 */
export class StatementCache {
  readonly #kept = new Map<string, StatementSyncInstance>();

  constructor(
    private readonly db: DatabaseSyncInstance,
    private readonly max = 256,
  ) {}

  prepare(sql: string): StatementSyncInstance {
    let statement = this.#kept.get(sql);
    if (statement) {
      this.#kept.delete(sql); // to the back: the most recently used
    } else {
      statement = this.db.prepare(sql);
      if (this.#kept.size >= this.max) this.#kept.delete(this.#kept.keys().next().value!);
    }
    this.#kept.set(sql, statement);
    return statement;
  }

  get size(): number {
    return this.#kept.size;
  }
}
