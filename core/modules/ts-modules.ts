/**
 * Loading a user's TypeScript module (a custom plugin) in the compiled gateway. The gateway's own
 * TypeScript is compiled by `npm run build`; a user's is not, and may live outside the repository,
 * so it is loaded through tsx, a runtime dependency for exactly this (user modules only: nothing
 * loads it until one is named). Launched services are child processes and get tsx's loader on
 * their command line instead (core/bin/launcher.ts).
 */
import { pathToFileURL } from 'node:url';
import { RUNNING_COMPILED } from './build-paths.js';

let registered: Promise<void> | undefined;

/** Installs tsx's loader in this process once, with the hooks that map the gateway's sources to dist/. */
function registerTypeScript(): Promise<void> {
  registered ??= (async () => {
    const tsx = await import('tsx/esm/api');
    tsx.register();
    // Registered last, so they run first and adjust what tsx resolves.
    await import('./ts-register.js');
  })();
  return registered;
}

/** Imports `path`: through tsx when it is TypeScript and this process runs compiled, directly otherwise. */
export async function importModule(path: string): Promise<unknown> {
  if (RUNNING_COMPILED && path.endsWith('.ts')) await registerTypeScript();
  return import(pathToFileURL(path).href);
}
