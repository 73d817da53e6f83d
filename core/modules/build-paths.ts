import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when this process runs the compiled gateway (dist/), false under tsx on the TypeScript sources. */
export const RUNNING_COMPILED = import.meta.url.endsWith('.js');

/** The extension of this build's own modules: `.js` in dist/, `.ts` on the sources. */
export const MODULE_EXTENSION = RUNNING_COMPILED ? '.js' : '.ts';

/** The repository root (where the TypeScript sources are), whichever way this process runs. */
export const SOURCE_ROOT = fileURLToPath(new URL(RUNNING_COMPILED ? '../../..' : '../..', import.meta.url)).replace(/[/\\]$/, '');

/** Where `npm run build` puts the compiled gateway and examples. */
export const BUILD_ROOT = join(SOURCE_ROOT, 'dist');

/**
 * The compiled twin in dist/ of one of the repository's own TypeScript files (`examples/x/main.ts` →
 * `dist/examples/x/main.js`), or undefined for a file outside the repository, in dist/ or in
 * node_modules.
 */
export function compiledTwin(path: string): string | undefined {
  const rel = relative(SOURCE_ROOT, path);
  if (!path.endsWith('.ts') || rel.startsWith('..') || rel.startsWith(`dist${sep}`) || rel.split(sep).includes('node_modules'))
    return undefined;
  return join(BUILD_ROOT, `${rel.slice(0, -'.ts'.length)}.js`);
}

/**
 * A module path as this process should load it. Running compiled, a `.ts` path becomes compiled
 * JavaScript when there is some: the `.js` next to it (a config copied into dist/ names the TypeScript
 * entry points), or its twin in dist/ (a config in the repository names the sources). Anything else
 * is left as given: a user's TypeScript, loaded through tsx (core/modules/ts-modules.ts), and examples the
 * build leaves out (examples/local-llm, whose engine is installed apart).
 */
export function runnableModule(path: string): string {
  if (!RUNNING_COMPILED || !path.endsWith('.ts')) return path;
  const beside = `${path.slice(0, -'.ts'.length)}.js`;
  if (existsSync(beside)) return beside;
  const twin = compiledTwin(path);
  return twin && existsSync(twin) ? twin : path;
}
