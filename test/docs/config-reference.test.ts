/**
 * docs/configuration.md documents every field of the config: each property of each top-level section
 * of schemas/config.schema.json has a row naming it in the reference table (`name` or `name[]`).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  type?: string | string[];
  items?: SchemaNode;
}

const root = new URL('../../', import.meta.url);
const schema = JSON.parse(readFileSync(new URL('schemas/config.schema.json', root), 'utf8')) as SchemaNode;
const doc = readFileSync(new URL('docs/configuration.md', root), 'utf8');

/** `section.field` for every field one level inside a section (array sections: their items' fields). */
function fields(): string[] {
  const out: string[] = [];
  for (const [section, node] of Object.entries(schema.properties ?? {})) {
    const inner = node.properties ?? node.items?.properties ?? {};
    for (const field of Object.keys(inner)) out.push(`${section}.${field}`);
  }
  return out;
}

describe('docs/configuration.md', () => {
  it('names every config field of the schema in its reference', () => {
    const all = fields();
    expect(all.length).toBeGreaterThan(40);
    const missing = all.filter((path) => {
      const field = path.split('.').pop()!;
      return !doc.includes(`\`${field}\``) && !doc.includes(`\`${field}[]\``);
    });
    expect(missing).toEqual([]);
  });
});
