/**
 * The plugin tables in README.md and docs/plugins.md name every built-in plugin (each folder of
 * plugins/ but the `_`-prefixed helper folders): a plugin added without a row would be one a reader
 * cannot find.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/python.js';

const builtins = readdirSync(join(repoRoot, 'plugins'))
  .filter((name) => !name.startsWith('_') && statSync(join(repoRoot, 'plugins', name)).isDirectory())
  .sort();

/** The plugin names in the first column of a Markdown table whose header's first cell is "Plugin". */
function tableNames(text: string): string[] {
  const names: string[] = [];
  let inTable = false;
  for (const line of text.split('\n')) {
    if (/^\|\s*Plugin\s*\|/.test(line)) inTable = true;
    else if (inTable && !line.startsWith('|')) inTable = false;
    else if (inTable) names.push(...[...(line.split('|')[1] ?? '').matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]!));
  }
  return names;
}

describe('plugin tables', () => {
  for (const file of ['README.md', 'docs/plugins.md']) {
    it(`${file} lists every built-in plugin`, () => {
      const listed = new Set(tableNames(readFileSync(join(repoRoot, file), 'utf8')));
      expect(builtins.filter((name) => !listed.has(name))).toEqual([]);
      expect(builtins.length).toBeGreaterThan(10);
    });
  }
});
