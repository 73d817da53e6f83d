import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GENERATED_DIR, generateTypes, generatorFlags } from '../../proto/scripts/gen-types.js';

function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

describe('generated protocol types (proto/src/generated)', () => {
  const fresh = mkdtempSync(join(tmpdir(), 'gate-types-'));
  afterAll(() => rmSync(fresh, { recursive: true, force: true }));

  it('are what `npm run gen:proto` makes from gate.proto today', () => {
    generateTypes(fresh);
    const expected = filesUnder(fresh);
    const committed = filesUnder(GENERATED_DIR);
    expect([...committed.keys()].sort(), 'run `npm run gen:proto` and commit proto/src/generated').toEqual([...expected.keys()].sort());
    for (const [path, text] of expected) {
      expect(committed.get(path), `${path} is stale: run \`npm run gen:proto\``).toBe(text);
    }
  });

  it('are generated with the loader options', () => {
    expect(generatorFlags()).toEqual(['--keepCase', '--longs=Number', '--enums=String', '--arrays', '--objects', '--oneofs']);
  });
});
