/**
 * The console's build (docs/console.md): console/src (Preact + TSX) and console/styles.css bundled by
 * esbuild into `<outDir>/assets/` under content-hashed names, and console/index.html written with
 * those names. No CDN and no inline script or style: the page loads only its own two files, which
 * the console plugin serves under a strict Content-Security-Policy. Takes well under a second.
 * Called by scripts/build.mjs (into dist/plugins/console/public) and by the console's browser test.
 */
import { build } from 'esbuild';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONSOLE = fileURLToPath(new URL('../console/', import.meta.url));

export async function buildConsole(outDir) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(CONSOLE, 'src', 'main.tsx'), styles: join(CONSOLE, 'styles.css') },
    outdir: join(outDir, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = outputs.find((name) => name.startsWith('app-') && name.endsWith('.js'));
  const style = outputs.find((name) => name.startsWith('styles-') && name.endsWith('.css'));
  if (!script || !style) throw new Error(`console build: missing output in ${outputs.join(', ')}`);
  const html = readFileSync(join(CONSOLE, 'index.html'), 'utf8')
    .replace('{{script}}', `assets/${script}`)
    .replace('{{style}}', `assets/${style}`);
  writeFileSync(join(outDir, 'index.html'), html);
  cpSync(join(CONSOLE, 'favicon.svg'), join(outDir, 'favicon.svg'));
}

// `node scripts/build-console.mjs [outDir]`: the console alone (while working on it).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  await buildConsole(process.argv[2] ?? fileURLToPath(new URL('../dist/plugins/console/public/', import.meta.url)));
  process.stdout.write(`built the console in ${Date.now() - started} ms\n`);
}
