/**
 * Module resolution hooks (node:module `register`) for the compiled gateway loading a user's
 * TypeScript module through tsx: an import of one of the gateway's own sources (a plugin's
 * `import { definePlugin, gatewayError } from '<gateway>/core/plugins/index.js'`) resolves to the
 * compiled file the gateway itself runs, so the plugin and the gateway share one copy of core (one
 * GatewayError class for `instanceof`, one registry of error codes), not a second one from sources.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiledTwin } from './modules.js';

interface Resolved {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context: unknown) => Promise<Resolved>;

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith('file:')) return resolved;
  const twin = compiledTwin(fileURLToPath(resolved.url));
  if (!twin || !existsSync(twin)) return resolved;
  return { url: pathToFileURL(twin).href, format: 'module', shortCircuit: true };
}
