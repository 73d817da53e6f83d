/**
 * `npm run gen:proto`: regenerates proto/src/generated from gate.proto with proto-loader-gen-types,
 * using the flags that mirror PROTO_LOADER_OPTS, so the generated shapes are exactly what the loader
 * decodes. test/proto/generated-types.test.ts regenerates into a temporary folder and fails when the
 * committed files differ.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { PROTO_LOADER_OPTS } from '../src/loader.js';

const require = createRequire(import.meta.url);
const PROTO_DIR = fileURLToPath(new URL('..', import.meta.url));
export const GENERATED_DIR = fileURLToPath(new URL('../src/generated', import.meta.url));

/** The generator's flags for PROTO_LOADER_OPTS; a loader option with no flag here fails loudly. */
export function generatorFlags(): string[] {
  const flags: string[] = [];
  for (const [name, value] of Object.entries(PROTO_LOADER_OPTS)) {
    if (value === true) flags.push(`--${name}`);
    else if (value === false) continue;
    else if (value === Number || value === String) flags.push(`--${name}=${value.name}`);
    else throw new Error(`proto-loader option '${name}' has no generator flag here; add it to generatorFlags()`);
  }
  return flags;
}

/** Writes the generated types into `outDir` (emptied first). */
export function generateTypes(outDir: string): void {
  rmSync(outDir, { recursive: true, force: true });
  const cli = require.resolve('@grpc/proto-loader/build/bin/proto-loader-gen-types.js');
  const args = [
    cli,
    ...generatorFlags(),
    '--grpcLib=@grpc/grpc-js',
    '--includeComments',
    '--importFileExtension=.js',
    '-O',
    outDir,
    'gate.proto',
  ];
  const run = spawnSync(process.execPath, args, { cwd: PROTO_DIR, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`proto-loader-gen-types failed: ${run.stderr || run.stdout}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  generateTypes(GENERATED_DIR);
  process.stdout.write(`generated ${GENERATED_DIR}\n`);
}
