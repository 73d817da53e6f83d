/**
 * Installs core/modules/source-twins-hooks in this process, after tsx's loader: the gateway's own sources
 * resolve to their compiled twins (when this runs compiled), and a user's `.ts` file is an ES module
 * even where no package.json says `"type": "module"` (there tsx would compile it as CommonJS, where
 * top-level await, as in `await service.ready()`, fails). Imported with `--import` by launched
 * TypeScript services (core/bin/launcher.ts), and by core/modules/ts-modules.ts for plugins.
 */
import { register } from 'node:module';
import { MODULE_EXTENSION } from './build-paths.js';

register(new URL(`./source-twins-hooks${MODULE_EXTENSION}`, import.meta.url));
