import { fileURLToPath } from 'node:url';
import { MODULE_EXTENSION } from '../modules/build-paths.js';

/** The built-in plugins' folder (under dist/ when the gateway runs compiled). */
export const BUILTIN_DIR = fileURLToPath(new URL('../../plugins/', import.meta.url));

/**
 * Where built-in plugin `name` lives (its compiled index.js when the gateway runs from dist/); plugin
 * folders starting with `_` hold shared helpers only.
 */
export function builtinPluginPath(name: string): string {
  return `${BUILTIN_DIR}${name}/index${MODULE_EXTENSION}`;
}
