/**
 * What `npm start` runs, read from package.json's `start` script (`node <flags…> <entry>`), so that the
 * tests and the benchmark start the compiled gateway exactly as users do, with the same Node flags
 * (the heap's full-collection floor, docs/operations.md "Memory and garbage collection").
 */
import { readFileSync } from 'node:fs';

const ownPackageJson = new URL('../package.json', import.meta.url);

/** The start script of this checkout, or of the checkout at `root` (a directory path ending in `/`). */
export function startCommand(root) {
  const packageJson = root ? `${root}package.json` : ownPackageJson;
  const { scripts } = JSON.parse(readFileSync(packageJson, 'utf8'));
  const [node, ...args] = scripts.start.trim().split(/\s+/);
  if (node !== 'node' || args.length === 0) throw new Error(`package.json's start script is not "node <flags…> <entry>": ${scripts.start}`);
  return { nodeFlags: args.slice(0, -1), entry: args.at(-1) };
}
