/**
 * Module resolution hooks (node:module `register`, by core/modules/ts-register.ts) for a user's TypeScript
 * loaded through tsx: plugins in the gateway's process, launched services in theirs. They run
 * before tsx's and look at what it resolved:
 * - running compiled, one of the gateway's own sources (a plugin's `import { definePlugin,
 *   gatewayError } from '<gateway>/core/plugins/index.js'`) becomes the compiled file the gateway
 *   itself runs, so the plugin and the gateway share one copy of core (one GatewayError class for
 *   `instanceof`), not a second one from the sources;
 * - any other `.ts` file is an ES module, as plugins and SDK services are, even in a folder without
 *   a package.json saying `"type": "module"`: there tsx would compile it as CommonJS, which fails on
 *   Node 20 (ERR_REQUIRE_CYCLE_MODULE for a plugin, no top-level await for `await service.ready()`).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiledTwin, RUNNING_COMPILED } from './build-paths.js';

interface Resolved {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context: unknown) => Promise<Resolved>;

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith('file:')) return resolved;
  const path = fileURLToPath(resolved.url);
  const twin = RUNNING_COMPILED ? compiledTwin(path) : undefined;
  if (twin && existsSync(twin)) return { url: pathToFileURL(twin).href, format: 'module', shortCircuit: true };
  if (path.endsWith('.ts') && !path.includes('/node_modules/')) return { ...resolved, format: 'module' };
  return resolved;
}
