import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const TSX_LOADER = createRequire(import.meta.url).resolve('tsx');
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEMO = join(ROOT, 'examples/demo/gateway.yaml');
const core = (path: string) => JSON.stringify(join(ROOT, 'core', path));

/**
 * How many modules of `packages` (npm package names) a gateway with the demo's config and plugins has
 * loaded once started, with `overrides` merged into the config's top-level sections (an array is
 * appended to the section's list; the store is in a scratch folder unless they name one). In a
 * process of its own: this one may have loaded them for other tests. For the dependencies a gateway
 * loads only when its config uses them.
 */
export async function demoGatewayLoads(
  overrides: Record<string, Record<string, unknown> | unknown[]>,
  packages: readonly string[],
): Promise<number> {
  const dataDir = await mkdtemp(join(tmpdir(), 'demo-modules-'));
  const script = `
    import { createRequire } from 'node:module';
    import { readFileSync } from 'node:fs';
    import { dirname } from 'node:path';
    import { parse } from 'yaml';
    import { buildConfig } from ${core('config/load.ts')};
    import { createGateway } from ${core('gateway.ts')};
    import { silentLogger } from ${core('observe/logger.ts')};
    const raw = parse(readFileSync(${JSON.stringify(DEMO)}, 'utf8'));
    raw.server = { ...raw.server, httpPort: 0, grpcPort: 0 };
    raw.store = { ...raw.store, dataDir: ${JSON.stringify(dataDir)} };
    for (const [section, values] of Object.entries(${JSON.stringify(overrides)}))
      raw[section] = Array.isArray(values) ? [...(raw[section] ?? []), ...values] : { ...raw[section], ...values };
    const gateway = await createGateway(buildConfig(raw, { env: {}, baseDir: dirname(${JSON.stringify(DEMO)}) }), { logger: silentLogger() });
    await gateway.start();
    const packages = ${JSON.stringify(packages)};
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => packages.some((name) => file.includes('/node_modules/' + name + '/')));
    await gateway.close();
    console.log(JSON.stringify({ loaded: loaded.length }));`;
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script], {
      cwd: ROOT,
    });
    return (JSON.parse(stdout.trim().split('\n').pop()!) as { loaded: number }).loaded;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
