import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/config/load.js';
import { createGateway, type Gateway } from '../../core/gateway.js';
import { silentLogger } from '../../core/observe/logger.js';
import type { ModelService } from '../../sdk/index.js';
import { startDemoServices } from '../support/demo-services.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { repoRoot } from '../support/python.js';

/**
 * Fuzzes the demo with schemathesis (PyPI, pinned in .ci/requirements.txt) against the document it
 * serves at /openapi.json: any 5xx, or an answer whose status, content type or body the document
 * does not describe, fails the run. Bounded by a number of examples per operation, with a fixed
 * seed: every operation gets its examples, and a run tests the same cases on any machine. No
 * --max-time: under it schemathesis's fuzzing phase keeps drawing new cases until the time is spent
 * (schemathesis 4), whatever --max-examples says, so the test took its whole budget on every
 * machine and tested more cases on a faster one. The demo's config, its services in this process,
 * the account's rate limit raised so the fuzzer meets the API rather than 429s.
 */
const SCHEMATHESIS = join(repoRoot, '.venv', 'bin', 'schemathesis');
const DEMO = fileURLToPath(new URL('../../examples/demo/gateway.yaml', import.meta.url));
const KEY = 'demo-api-key-0123456789';
/**
 * Examples per operation: about 3,100 cases for the 80 operations with the coverage phase's, some
 * 700 of them fuzzed (the former 60 s budget fuzzed about 3,000 on a busy 2-core machine).
 */
const EXAMPLES = 10;

const ready = requirePrerequisite('schemathesis fuzzing of the OpenAPI document', {
  available: existsSync(SCHEMATHESIS),
  reason: `${SCHEMATHESIS} not found (pip install -r .ci/requirements.txt into .venv)`,
});

function runSchemathesis(url: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      SCHEMATHESIS,
      [
        'run',
        `${url}/openapi.json`,
        '--checks',
        'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance',
        '--phases',
        'examples,coverage,fuzzing',
        '--max-examples',
        String(EXAMPLES),
        '--seed',
        '20031',
        '--workers',
        '1',
        '--generation-database',
        'none',
        '--no-color',
        '--request-timeout',
        '10',
        '--header',
        `PLATFORM-API-KEY: ${KEY}`,
        '--header',
        `Authorization: Bearer ${KEY}`,
      ],
      { cwd: repoRoot, env: { ...process.env, SCHEMATHESIS_HOOKS: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe.skipIf(!ready)('schemathesis against the demo', () => {
  let gateway: Gateway;
  let url = '';
  const services: ModelService[] = [];
  let dataDir = '';

  beforeAll(async () => {
    const raw = parseYaml(readFileSync(DEMO, 'utf8')) as Record<string, any>;
    raw.server = { ...raw.server, httpPort: 0, grpcPort: 0 };
    raw.accounts[0].requestsPerSecond = 100_000;
    // Its own data folder: fitted models under the demo's .data would meet those of other tests running at once.
    raw.store = { ...raw.store, dataDir: (dataDir = mkdtempSync(join(tmpdir(), 'schemathesis-data-'))) };
    const config = buildConfig(raw, { env: {}, baseDir: dirname(DEMO) });
    gateway = await createGateway(config, { logger: silentLogger() });
    const { httpUrl, grpcAddress } = await gateway.start();
    url = httpUrl;
    services.push(...(await startDemoServices(grpcAddress)));
  });

  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await gateway?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds no server error and no answer outside the document', async () => {
    const { code, output } = await runSchemathesis(url);
    const summary = output.slice(output.lastIndexOf('SUMMARY') - 40);
    expect(code, `schemathesis exited ${code}:\n${output.slice(-12_000)}`).toBe(0);
    // Every operation of the document was tested.
    const operations = /Selected: (\d+)\/(\d+)/.exec(summary);
    expect(operations?.[1], summary).toBe(operations?.[2]);
    expect(summary).toContain(`Tested: ${operations![2]}\n`);
  }, 120_000);
});
