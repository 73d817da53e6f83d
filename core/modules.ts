import { existsSync } from 'node:fs';

/** True when this process runs the compiled gateway (dist/), false under tsx on the TypeScript sources. */
export const RUNNING_COMPILED = import.meta.url.endsWith('.js');

/** The extension of this build's own modules: `.js` in dist/, `.ts` on the sources. */
export const MODULE_EXTENSION = RUNNING_COMPILED ? '.js' : '.ts';

/**
 * A module path as this process should load it. A `.ts` path whose compiled `.js` sits next to it
 * (a config copied into dist/ names the TypeScript entry points) becomes that `.js` when running
 * compiled; anything else is left as given.
 */
export function runnableModule(path: string): string {
  if (!RUNNING_COMPILED || !path.endsWith('.ts')) return path;
  const compiled = `${path.slice(0, -'.ts'.length)}.js`;
  return existsSync(compiled) ? compiled : path;
}
