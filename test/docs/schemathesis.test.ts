import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { signedIn, type Client } from '../userspace/support.js';
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
 *
 * Two runs, so that the user space is fuzzed past its doors: with the demo key, given MANAGE here,
 * and with the demo person's console session (cookie and CSRF token; an operator, so the operator
 * routes too). Each names account `demo` in every path (a schemathesis config's `parameters`): a
 * random account name meets 403 or 404 before any of the route's own logic. Neither lets schemathesis
 * make up credentials of its own (`with-security-parameters`): made-up keys beside the session's
 * cookie meet 401 before the cookie is read.
 */
const SCHEMATHESIS = join(repoRoot, '.venv', 'bin', 'schemathesis');
const DEMO = fileURLToPath(new URL('../../examples/demo/gateway.yaml', import.meta.url));
const KEY = 'demo-api-key-0123456789';
/**
 * Examples per operation: about 3,000 cases a run for the 83 operations with the coverage phase's,
 * some 700 of them fuzzed, in about 10 s a run (40 gave 4,700 and 3,000 cases, 20 s a run, all passing).
 */
const EXAMPLES = 10;

const ready = requirePrerequisite('schemathesis fuzzing of the OpenAPI document', {
  available: existsSync(SCHEMATHESIS),
  reason: `${SCHEMATHESIS} not found (pip install -r .ci/requirements.txt into .venv)`,
});

function runSchemathesis(
  url: string,
  configFile: string,
  headers: string[],
  options: string[],
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      SCHEMATHESIS,
      [
        '--config-file',
        configFile,
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
        ...headers.flatMap((header) => ['--header', header]),
        ...options,
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
  let configFile = '';
  let session: Client | undefined;

  beforeAll(async () => {
    const raw = parseYaml(readFileSync(DEMO, 'utf8')) as Record<string, any>;
    raw.server = { ...raw.server, httpPort: 0, grpcPort: 0 };
    raw.accounts[0].requestsPerSecond = 100_000;
    raw.apiKeys[0].permissions.push('MANAGE');
    // Its own data folder: fitted models under the demo's .data would meet those of other tests running at once.
    raw.store = { ...raw.store, dataDir: (dataDir = mkdtempSync(join(tmpdir(), 'schemathesis-data-'))) };
    writeFileSync(
      (configFile = join(dataDir, 'schemathesis.toml')),
      '[parameters]\naccount = "demo"\nmodel = "echo"\n\n[generation]\nwith-security-parameters = false\n',
    );
    const config = buildConfig(raw, { env: {}, baseDir: dirname(DEMO) });
    gateway = await createGateway(config, { logger: silentLogger() });
    const { httpUrl, grpcAddress } = await gateway.start();
    url = httpUrl;
    services.push(...(await startDemoServices(grpcAddress)));
    // Signed in before any fuzzing: the fuzzer's failed logins from this address would throttle it (429).
    session = await signedIn({ httpUrl: url }, { email: 'demo@example.com', password: 'demo-password-123' });
  });

  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await gateway?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** How many operations met only 401 or 403 (schemathesis's warning): those it never got past the door of. */
  const authOnly = (output: string) => Number(/(\d+) operations? returned only 401\/403/.exec(output)?.[1] ?? 0);

  /** `excluded`: the operations left out of this run (`--exclude-name`). */
  const fuzz = async (headers: string[], excluded: string[] = []) => {
    const options = excluded.flatMap((name) => ['--exclude-name', name]);
    const { code, output } = await runSchemathesis(url, configFile, headers, options);
    const summary = output.slice(output.lastIndexOf('SUMMARY') - 40);
    expect(code, `schemathesis exited ${code}:\n${output.slice(-12_000)}`).toBe(0);
    // Every operation of the document was tested (but those left out).
    const operations = /Selected: (\d+)\/(\d+)/.exec(summary);
    expect(Number(operations?.[1]) + excluded.length, summary).toBe(Number(operations?.[2]));
    expect(summary).toContain(`Tested: ${operations![1]}\n`);
    return output;
  };

  it('finds no server error and no answer outside the document, with the demo key', async () => {
    const output = await fuzz([`PLATFORM-API-KEY: ${KEY}`, `Authorization: Bearer ${KEY}`]);
    // Past the doors: only the operator's routes, the session's own and /metrics refuse a key.
    expect(authOnly(output), output.slice(-6000)).toBeLessThanOrEqual(9);
  }, 120_000);

  it("finds no server error and no answer outside the document, with the demo operator's session", async () => {
    expect(session?.cookie).toMatch(/^gw_session=./);
    // Not the two that end it (the fuzzer finds its ID in GET auth/sessions' answer): every later
    // case would meet 401. The key's run calls them, test/userspace/ covers them.
    const output = await fuzz(
      [`Cookie: ${session!.cookie}`, `x-csrf-token: ${session!.csrf}`],
      ['POST /api/platformcore/auth/logout', 'DELETE /api/platformcore/auth/sessions/{sessionId}'],
    );
    // Only /metrics (its own bearer token) refuses the session.
    expect(authOnly(output), output.slice(-6000)).toBeLessThanOrEqual(1);
  }, 120_000);
});
