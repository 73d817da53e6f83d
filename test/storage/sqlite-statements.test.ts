import { DatabaseSync } from '@photostructure/sqlite';
import { describe, expect, it } from 'vitest';
import { StatementCache } from '../../core/storage/sqlite-statements.js';

describe('the embedded home’s prepared statements', () => {
  const open = () => {
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, doc TEXT NOT NULL)');
    db.prepare('INSERT INTO t VALUES (?, ?)').run('a', '{"n":1}');
    return db;
  };

  it('prepares a text once and hands the same statement back', () => {
    const cache = new StatementCache(open());
    const first = cache.prepare('SELECT doc FROM t WHERE id = ?');
    expect(cache.prepare('SELECT doc FROM t WHERE id = ?')).toBe(first);
    expect(first.get('a')).toEqual({ doc: '{"n":1}' });
    expect(cache.prepare('SELECT doc FROM t WHERE id = ?').get('zz')).toBeUndefined();
  });

  it('keeps at most its bound, letting the least recently used go', () => {
    const cache = new StatementCache(open(), 3);
    const text = (n: number) => `SELECT ${n} AS n`;
    const kept = [1, 2, 3].map((n) => cache.prepare(text(n)));
    cache.prepare(text(1)); // used again: 2 is now the oldest
    cache.prepare(text(4));
    expect(cache.size).toBe(3);
    expect(cache.prepare(text(1))).toBe(kept[0]);
    expect(cache.prepare(text(3))).toBe(kept[2]);
    expect(cache.prepare(text(2))).not.toBe(kept[1]);
    expect(cache.size).toBe(3);
  });

  it('a kept statement still runs after the schema changes under it', () => {
    const db = open();
    const cache = new StatementCache(db);
    const select = "SELECT doc FROM t WHERE json_extract(doc, '$.n') = ?";
    expect(cache.prepare(select).all(1)).toHaveLength(1);
    db.exec("CREATE INDEX t_n ON t(json_extract(doc, '$.n'))");
    db.prepare('INSERT INTO t VALUES (?, ?)').run('b', '{"n":1}');
    expect(cache.prepare(select).all(1)).toHaveLength(2);
    db.exec('DROP INDEX t_n');
    expect(cache.prepare(select).all(1)).toHaveLength(2);
  });
});
