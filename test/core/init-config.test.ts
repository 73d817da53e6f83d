import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_CONFIG } from '../../core/bin/init-config.js';
import { loadConfigFile } from '../../core/config/load.js';
import { repoRoot } from '../support/python.js';

/** `npm run init-config -- <path>`: a copy of the demo config that still works from its new folder. */
describe('init-config', () => {
  it('writes a starter config whose relative paths resolve to the same files, comments kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'init-config-'));
    const target = join(dir, 'nested', '..', 'my-gateway.yaml');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'core/bin/init-config.ts', target], { cwd: repoRoot, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('GATEWAY_CONFIG=');

    const demo = loadConfigFile(DEMO_CONFIG, { env: {} });
    const copy = loadConfigFile(join(dir, 'my-gateway.yaml'), { env: {} });
    expect(copy.launch.map((l) => l.module)).toEqual(demo.launch.map((l) => l.module));
    expect(copy.launch.every((l) => existsSync(l.module))).toBe(true);
    expect(copy.store.dataDir).toBe(demo.store.dataDir);
    expect(readFileSync(join(dir, 'my-gateway.yaml'), 'utf8')).toContain('# The zero-setup demo');

    const again = spawnSync(process.execPath, ['--import', 'tsx', 'core/bin/init-config.ts', target], { cwd: repoRoot, encoding: 'utf8' });
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('not overwriting');
  });
});
