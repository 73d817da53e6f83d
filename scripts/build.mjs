/**
 * `npm run build`: the protocol and SDK packages (their own dist/), then the gateway, its plugins and
 * the examples into dist/, plus the files they read at run time (schemas, gate.proto, YAML, Python).
 * `node scripts/build.mjs --if-stale` (npm's prestart) builds only when a source is newer than the
 * last build, so `npm start` on a fresh clone builds once and later starts at once.
 * Plain JavaScript: it runs before anything is compiled.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConsole } from './build-console.mjs';
import { processAlive } from './process-alive.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
/** Held while building, so builds started at once (parallel test files, a start during a build) take turns. */
const LOCK = join(ROOT, '.build-lock');
/** What the build reads; a change to any of these makes the build stale. */
const SOURCES = [
  'core',
  'plugins',
  'console',
  'examples',
  'schemas',
  'proto/src',
  'proto/gate.proto',
  'sdk',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
/** Folders whose non-TypeScript files are copied next to the compiled ones. */
const ASSET_DIRS = ['core', 'plugins', 'examples', 'schemas'];
const SKIP = new Set(['node_modules', 'dist', '.data']);

function* files(path) {
  if (!existsSync(path)) return;
  if (!statSync(path).isDirectory()) {
    yield path;
    return;
  }
  for (const name of readdirSync(path)) if (!SKIP.has(name)) yield* files(join(path, name));
}

function newestSource() {
  let newest = 0;
  for (const source of SOURCES) for (const file of files(join(ROOT, source))) newest = Math.max(newest, statSync(file).mtimeMs);
  return newest;
}

function isStale() {
  return !existsSync(STAMP) || statSync(STAMP).mtimeMs < newestSource();
}

function tsc(project) {
  const bin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [bin, '-p', project], { cwd: ROOT, stdio: 'inherit' });
}

async function build() {
  const started = Date.now();
  // Said before the wait, so a first `npm start` does not look stuck for its minute of compiling.
  process.stdout.write(`building dist/ (${existsSync(STAMP) ? 'sources changed' : 'first build, about a minute'}) ...\n`);
  tsc('proto/tsconfig.build.json');
  tsc('sdk/tsconfig.build.json');
  tsc('tsconfig.build.json');
  for (const dir of ASSET_DIRS) {
    for (const file of files(join(ROOT, dir))) {
      if (file.endsWith('.ts')) continue;
      const target = join(DIST, relative(ROOT, file));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(file, target);
    }
  }
  // proto/src/loader.ts finds gate.proto one level up from its own folder: dist/proto/gate.proto.
  cpSync(join(ROOT, 'proto', 'gate.proto'), join(DIST, 'proto', 'gate.proto'));
  // The console's browser files, served by plugins/console from beside its compiled module.
  await buildConsole(join(DIST, 'plugins', 'console', 'public'));
  writeFileSync(STAMP, new Date().toISOString());
  process.stdout.write(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Takes the lock (a folder: creating it is atomic), waiting for a running build; a dead holder's lock is taken over. */
function lock() {
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let holder = 0;
      try {
        holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
      } catch {
        // Being written: look again.
      }
      if (holder && !processAlive(holder)) rmSync(LOCK, { recursive: true, force: true });
      else sleep(200);
    }
  }
}

const onlyIfStale = process.argv.includes('--if-stale');
if (onlyIfStale && !isStale()) process.exit(0);
lock();
try {
  // Another build may have finished while this one waited.
  if (!onlyIfStale || isStale()) await build();
} finally {
  rmSync(LOCK, { recursive: true, force: true });
}
