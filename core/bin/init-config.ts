/**
 * `npm run init-config -- <path>`: writes a starter config, a copy of the demo config whose relative
 * paths (store.dataDir, launch[].module, registry.files, plugins.custom[].path) are rewritten to stay
 * valid from the new file's folder, comments kept. A plain copy elsewhere would break every one of them.
 */
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { SOURCE_ROOT } from '../modules/build-paths.js';

/**
 * The demo config, in the repository (not its copy in dist/), whether the gateway runs compiled or
 * not: its paths name the examples' sources, which the compiled gateway runs as their compiled twins
 * in dist/ where the build made them, and through tsx where it did not (examples/local-llm). A
 * deployment of dist/ alone has only the copy.
 */
const SOURCE_DEMO_CONFIG = join(SOURCE_ROOT, 'examples', 'demo', 'gateway.yaml');
export const DEMO_CONFIG = existsSync(SOURCE_DEMO_CONFIG)
  ? SOURCE_DEMO_CONFIG
  : fileURLToPath(new URL('../../examples/demo/gateway.yaml', import.meta.url));

/** The config text of `source`, with its relative paths re-based from its folder onto `targetDir`. */
export function rebaseConfig(sourceText: string, sourceDir: string, targetDir: string): string {
  const doc = parseDocument(sourceText);
  const rebase = (value: unknown) => {
    if (typeof value !== 'string' || isAbsolute(value) || value.includes('${')) return value;
    const moved = relative(targetDir, resolve(sourceDir, value));
    return moved.startsWith('.') ? moved : `./${moved}`;
  };
  const rewrite = (path: (string | number)[]) => {
    const node = doc.getIn(path, true);
    if (isScalar(node)) node.value = rebase(node.value);
  };
  rewrite(['store', 'dataDir']);
  forEachItem(doc, ['registry', 'files'], (i) => rewrite(['registry', 'files', i]));
  forEachItem(doc, ['plugins', 'custom'], (i) => rewrite(['plugins', 'custom', i, 'path']));
  forEachItem(doc, ['launch'], (i) => rewrite(['launch', i, 'module']));
  return doc.toString();
}

function forEachItem(doc: Document, path: string[], each: (index: number) => void): void {
  const node = doc.getIn(path, true);
  if (isSeq(node)) node.items.forEach((_item, i) => each(i));
  else if (isMap(node)) throw new Error(`${path.join('.')} is not a list`);
}

function main(argv: string[]): number {
  const target = argv[0];
  if (!target || target.startsWith('-')) {
    process.stderr.write(
      'Usage: npm run init-config -- <new-config.yaml>\n  writes a copy of the demo config whose relative paths still point at the examples\n',
    );
    return 2;
  }
  const path = resolve(process.env.INIT_CWD ?? process.cwd(), target); // npm runs scripts from the package folder
  if (existsSync(path)) {
    process.stderr.write(`init-config: ${path} exists; not overwriting it\n`);
    return 1;
  }
  writeFileSync(path, rebaseConfig(readFileSync(DEMO_CONFIG, 'utf8'), dirname(DEMO_CONFIG), dirname(path)));
  process.stdout.write(`Wrote ${path} (the demo config, paths rebased).\nStart it with: GATEWAY_CONFIG=${target} npm start\n`);
  return 0;
}

// Run as a script (also through a symlinked folder), not when imported by a test.
if (process.argv[1] && realpathSync(resolve(process.argv[1])) === realpathSync(fileURLToPath(import.meta.url)))
  process.exitCode = main(process.argv.slice(2));
