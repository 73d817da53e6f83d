/**
 * `npm run store -- <command>`: operator tools for the store of the config named by GATEWAY_CONFIG (or
 * the demo's), on whichever home it uses (docs/storage.md):
 *   stats              documents, bytes and oldest record per collection
 *   backup <file>      a consistent copy of the embedded store, taken while gateways run
 *   restore <file>     puts a backup in place (gateways stopped)
 *   export <file>      every document and blob as JSON lines, from any home
 *   import <file>      adds an export to this config's store (e.g. the embedded store into MongoDB:
 *                      MONGODB_URI=mongodb://… npm run store -- import data.jsonl)
 */
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from '@photostructure/sqlite';
import { loadConfigFile } from '../config/load.js';
import { silentLogger } from '../observe/logger.js';
import type { DocStore } from '../storage/port.js';
import { SCHEMA_VERSION } from '../storage/schema.js';
import { EMBEDDED_DB_FILE, type SqliteDocStore } from '../storage/sqlite-docs.js';
import { openStorage } from '../storage/storage.js';
import { exportStore, importStore } from '../storage/transfer.js';

const DEMO_CONFIG = fileURLToPath(new URL('../../examples/demo/gateway.yaml', import.meta.url));
const USAGE = 'usage: npm run store -- stats | backup <file> | restore <file> | export <file> | import <file>';
/** Fields that date a record, tried in this order for "oldest". */
const DATE_FIELDS = ['createdAt', 'windowStart', 'day', 'updatedAt'];

async function oldest(docs: DocStore, name: string): Promise<string> {
  const collection = await docs.collection<{ _id: string | number } & Record<string, unknown>>({ name, indexes: [] });
  for (const field of DATE_FIELDS) {
    const doc = await collection.findOne({ [field]: { $exists: true } }, { sort: { [field]: 1 } });
    const value = doc?.[field];
    if (typeof value === 'number') return new Date(value).toISOString();
    if (typeof value === 'string') return value;
  }
  return '-';
}

async function stats(docs: DocStore): Promise<void> {
  const rows = [['collection', 'documents', 'bytes', 'oldest']];
  for (const c of await docs.stats()) {
    rows.push([
      c.name,
      String(c.documents),
      String(c.bytes),
      c.name.includes('.') || c.name.startsWith('(') || c.documents === 0 ? '-' : await oldest(docs, c.name),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    process.stdout.write(
      `${r
        .map((v, i) => v.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
}

/** The schema version a backup file holds, read without opening it as a store. */
function backupVersion(file: string): number {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const row = db.prepare(`SELECT json_extract(doc,'$.version') AS v FROM "c__meta" WHERE id = 'schema'`).get() as
      { v?: number } | undefined;
    return Number(row?.v ?? 0);
  } catch {
    throw new Error(`${file} is not a backup of the embedded store`);
  } finally {
    db.close();
  }
}

async function main(): Promise<number> {
  const [command, file] = process.argv.slice(2);
  if (!command || (command !== 'stats' && !file)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const configPath = process.env.GATEWAY_CONFIG ? resolve(process.env.INIT_CWD ?? process.cwd(), process.env.GATEWAY_CONFIG) : DEMO_CONFIG;
  const config = loadConfigFile(configPath).store;
  const target = file ? resolve(process.env.INIT_CWD ?? process.cwd(), file) : '';
  if (command === 'restore') {
    if (config.kind !== 'embedded')
      throw new Error(`restore puts back an embedded store; this config's store is ${config.kind} (docs/storage.md)`);
    const version = backupVersion(target);
    if (version > SCHEMA_VERSION) throw new Error(`the backup holds schema version ${version}; this gateway reads up to ${SCHEMA_VERSION}`);
    const dest = join(config.dataDir, EMBEDDED_DB_FILE);
    mkdirSync(config.dataDir, { recursive: true });
    for (const suffix of ['-wal', '-shm']) rmSync(`${dest}${suffix}`, { force: true });
    copyFileSync(target, dest);
    process.stdout.write(`restored ${target} into ${dest} (schema version ${version}; a gateway upgrades it at boot)\n`);
    return 0;
  }
  if (command === 'backup' && config.kind !== 'embedded') {
    throw new Error(
      `backup copies the embedded store; this config's store is ${config.kind}: use export, or mongodump for MongoDB (docs/storage.md)`,
    );
  }
  if (command === 'backup' && existsSync(target)) throw new Error(`${target} exists: name a new file`);
  const storage = await openStorage(config, silentLogger());
  try {
    switch (command) {
      case 'stats':
        await stats(storage.docs);
        return 0;
      case 'backup':
        // VACUUM INTO: one consistent snapshot, written while other processes go on writing.
        (storage.docs as SqliteDocStore).db.prepare('VACUUM INTO ?').run(target);
        process.stdout.write(`backup written to ${target}\n`);
        return 0;
      case 'export': {
        const counts = await exportStore(storage.docs, target);
        process.stdout.write(`exported ${counts.documents} documents and ${counts.blobs} blobs to ${target}\n`);
        return 0;
      }
      case 'import': {
        const counts = await importStore(storage.docs, target);
        process.stdout.write(
          `imported ${counts.documents} documents and ${counts.blobs} blobs into the ${storage.kind} store (${counts.skipped} already there)\n`,
        );
        return 0;
      }
      default:
        process.stderr.write(`${USAGE}\n`);
        return 2;
    }
  } finally {
    await storage.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`store: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
