/**
 * The OpenAPI document of schemas/openapi.yaml as served: external `$ref`s to the request schemas
 * (the same files the plugins validate with) inlined under components.schemas, and only the paths of
 * the plugins a gateway has enabled.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const OPENAPI_PATH = fileURLToPath(new URL('../../schemas/openapi.yaml', import.meta.url));

type Json = Record<string, any>;

/** The document with every `./folder/file.schema.json` reference inlined as a component. */
export function bundledDocument(path = OPENAPI_PATH): Json {
  const doc = parseYaml(readFileSync(path, 'utf8')) as Json;
  const schemas: Json = ((doc.components ??= {}).schemas ??= {});
  const inline = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(inline);
    if (!node || typeof node !== 'object') return;
    const object = node as Json;
    if (typeof object.$ref === 'string' && !object.$ref.startsWith('#')) {
      const name = basename(object.$ref)
        .replace(/\.schema\.json$|\.json$/, '')
        .replace(/(^|-)([a-z0-9])/g, (_m, _d, c: string) => c.toUpperCase());
      if (!schemas[name]) {
        const { $id: _id, $schema: _schema, ...schema } = JSON.parse(readFileSync(join(dirname(path), object.$ref), 'utf8')) as Json;
        schemas[name] = schema;
      }
      object.$ref = `#/components/schemas/${name}`;
      return;
    }
    Object.values(object).forEach(inline);
  };
  inline(doc.paths);
  return doc;
}

/** A copy with the operations of other plugins removed (and paths left empty by that). */
export function forPlugins(doc: Json, enabled: ReadonlySet<string>, serverUrl?: string): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    const kept = Object.fromEntries(
      Object.entries(item as Json).filter(([, op]) => !(op as Json)['x-plugin'] || enabled.has((op as Json)['x-plugin'])),
    );
    if (Object.keys(kept).length) paths[path] = kept;
  }
  return { ...doc, ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}), paths };
}
