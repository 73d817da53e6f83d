import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../core/admission/secret-hashes.js';
import { buildConfig, loadConfigFile } from '../../core/config/load.js';
import { BootError } from '../../core/errors.js';

const bootError = (fn: () => unknown): BootError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof BootError) return err;
    throw err;
  }
  throw new Error('expected a BootError');
};

describe('config loading', () => {
  it('stops the boot listing every schema problem at once', () => {
    const err = bootError(() =>
      buildConfig(
        {
          server: { httpPort: 'eighty' },
          accounts: [{ id: 1, name: '123' }],
          services: [{ id: 1, name: 'x', account: 1, extra: true }],
          apiKeys: [{ name: 'k', account: 1, key: 'short', permissions: ['EVERYTHING'] }],
        },
        { env: {} },
      ),
    );
    expect(err.code).toBe('CONFIG_INVALID');
    const text = err.problems.join('\n');
    expect(text).toContain('/server/httpPort: must be integer');
    expect(text).toContain('/accounts/0/name: must match pattern');
    expect(text).toContain("/services/0: must NOT have additional properties ('extra')");
    expect(text).toContain('/apiKeys/0/key: must NOT have fewer than 16 characters');
    expect(text).toContain('/apiKeys/0/permissions/0: must be equal to one of the allowed values');
    expect(err.message).toContain('CONFIG_INVALID');
  });

  it('reports inconsistencies: unknown accounts, duplicate IDs and names, shared tokens', () => {
    const err = bootError(() =>
      buildConfig(
        {
          accounts: [
            { id: 1, name: 'a' },
            { id: 1, name: 'a' },
          ],
          services: [
            { id: 5, name: 's', account: 'ghost', aliases: ['smollm'], connectionTokens: [{ token: 'same-token-1' }] },
            { id: 5, name: 't', account: 'a', aliases: ['smollm'], connectionTokens: [{ token: 'same-token-1' }] },
          ],
          gate: { servers: ['a:1', 'b:2'] },
          store: { kind: 'mongodb' },
        },
        { env: {} },
      ),
    );
    expect(err.problems).toEqual(
      expect.arrayContaining([
        'duplicate account id: 1',
        'duplicate account name: a',
        "services[0] (s): account 'ghost' is not declared in accounts",
        'duplicate service id: 5',
        'duplicate connection token (shared by two services): (secret)',
        'duplicate service alias: smollm',
        'gate.currentServer is required when gate.servers lists more than one gateway',
        'store.mongodbUri (or MONGODB_URI) is required when store.kind is mongodb',
      ]),
    );
  });

  it('runs one worker by default; several with MongoDB, or with the memory store when only stateless plugins are on', () => {
    expect(buildConfig({}, { env: {} }).server.workers).toBe(1);
    expect(buildConfig({ server: { workers: 'auto' } }, { env: {} }).server.workers).toBeGreaterThanOrEqual(1);
    const mongo = buildConfig(
      { plugins: { enabled: ['async-predict', 'usage'] } },
      { env: { GATEWAY_WORKERS: '3', MONGODB_URI: 'mongodb://127.0.0.1:1/x' } },
    );
    expect(mongo.server.workers).toBe(3);
    const noStoredResponses = { chatapi: { responses: { store: false } } };
    expect(
      buildConfig(
        { server: { workers: 2 }, plugins: { enabled: ['chatapi', 'sync-predict', 'metrics'], options: noStoredResponses } },
        { env: {} },
      ).server.workers,
    ).toBe(2);
  });

  it('refuses chatapi keeping stored responses with several workers on the memory store (issue 25 N10)', () => {
    // Found on one gateway with 2 workers: a stored response was found only by the worker that made
    // it, so 5 of 10 reads of it (and of previous_response_id) were 404.
    const err = bootError(() =>
      buildConfig({ server: { workers: 2 }, store: { kind: 'memory' }, plugins: { enabled: ['chatapi', 'sync-predict'] } }, { env: {} }),
    );
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.problems).toEqual([
      expect.stringContaining('server.workers is 2 with store.kind memory: the state of chatapi would live in one worker'),
    ]);
    expect(err.problems[0]).toContain('or set plugins.options.chatapi.responses.store: false');
    // MongoDB keeps them where every worker finds them.
    expect(
      buildConfig({ plugins: { enabled: ['chatapi'] } }, { env: { GATEWAY_WORKERS: '2', MONGODB_URI: 'mongodb://127.0.0.1:1/x' } }).server
        .workers,
    ).toBe(2);
  });

  it('asks the plugins, not a list in core, which keep state and which call upstream engines', () => {
    // Each built-in plugin declares both in its plugin.json; a plugin that keeps no state may run on many workers' memory.
    expect(
      buildConfig(
        { store: { kind: 'memory' }, plugins: { enabled: ['sync-predict', 'metrics', 'health', 'upstream'] } },
        { env: { GATEWAY_WORKERS: '2' } },
      ).server.workers,
    ).toBe(2);
    const upstream = { baseUrl: 'http://127.0.0.1:1', api: 'openai' };
    const input = (enabled: string[]) => ({
      accounts: [{ id: 1, name: 'a' }],
      services: [{ id: 1, name: 'llm', account: 'a', upstream }],
      plugins: { enabled },
    });
    const err = bootError(() => buildConfig(input(['sync-predict']), { env: {} }));
    expect(err.problems).toEqual(["services[0] (llm) has an upstream: enable the plugin that calls it (plugins.enabled: 'upstream')"]);
    expect(buildConfig(input(['sync-predict', 'upstream']), { env: {} }).services[0]!.upstream).toMatchObject({
      baseUrl: 'http://127.0.0.1:1',
    });
  });

  it('keeps state in the embedded store by default, under .data next to the config, shared by several workers', () => {
    const config = buildConfig(
      { plugins: { enabled: ['async-predict', 'sync-predict', 'chatapi', 'fitting', 'usage'] } },
      { env: { GATEWAY_WORKERS: '2' }, baseDir: '/srv/gw' },
    );
    expect(config.store).toMatchObject({ kind: 'embedded', dataDir: '/srv/gw/.data' });
    expect(config.server.workers).toBe(2);
  });

  it('refuses several workers on the memory store when a plugin keeps state there, naming the setting and the way out', () => {
    const err = bootError(() =>
      buildConfig(
        { store: { kind: 'memory' }, plugins: { enabled: ['chatapi', 'async-predict', 'fitting'] } },
        { env: { GATEWAY_WORKERS: '2' } },
      ),
    );
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toContain(
      'server.workers is 2 with store.kind memory: the state of chatapi, async-predict, fitting would live in one worker',
    );
    expect(err.problems[0]).toContain('use MongoDB (store.kind: mongodb, or MONGODB_URI)');
    expect(bootError(() => buildConfig({ server: { workers: 'many' } }, { env: {} })).problems.join('\n')).toContain('/server/workers');
    const ports = bootError(() => buildConfig({ server: { workers: 3, httpPort: 9092, grpcPort: 9090 } }, { env: {} }));
    expect(ports.problems).toEqual([
      "server.httpPort 9092 is one of the workers' own gRPC ports 9091-9093 (server.workerGrpcPort + worker index)",
    ]);
    const past = bootError(() => buildConfig({ server: { workers: 2, workerGrpcPort: 65535 } }, { env: {} }));
    expect(past.problems).toEqual(["server.workerGrpcPort: the workers' own gRPC ports 65535-65536 go past 65535"]);
  });

  it('applies defaults, environment overrides and ${VAR} substitution, and keeps only key hashes', () => {
    const config = buildConfig(
      {
        accounts: [{ id: 1, name: 'demo' }],
        apiKeys: [{ name: 'k', account: 'demo', key: '${MY_KEY:-fallback-key-0123456789}', permissions: ['READ_DATA'] }],
      },
      { env: { HTTP_PORT: '1234', GRPC_PORT: '4321', MONGODB_URI: 'mongodb://127.0.0.1:1/x', MY_KEY: 'from-the-environment-0001' } },
    );
    expect(config.server).toMatchObject({ httpPort: 1234, grpcPort: 4321, host: '127.0.0.1' });
    expect(config.store).toMatchObject({ kind: 'mongodb', mongodbUri: 'mongodb://127.0.0.1:1/x', resultRetentionDays: 7 });
    expect(config.gate).toMatchObject({ heartbeatIntervalMs: 5000, defaultTimeoutSec: 60 });
    expect(config.accounts[0]).toMatchObject({ requestsPerSecond: 20, blocked: false });
    expect(config.apiKeys[0]!.keyHash).toBe(hashSecret('from-the-environment-0001'));
    expect(JSON.stringify(config)).not.toContain('from-the-environment-0001');
    expect(Object.isFrozen(config.apiKeys[0])).toBe(true);
  });

  it('reads YAML files and resolves relative paths against the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, 'accounts:\n  - id: 1\n    name: demo\nplugins:\n  custom:\n    - path: ./my-plugin.ts\nstore:\n  dataDir: data\n');
    const config = loadConfigFile(file, { env: {} });
    expect(config.plugins.custom[0]!.path).toBe(join(dir, 'my-plugin.ts'));
    expect(config.store.dataDir).toBe(join(dir, 'data'));
    // GATEWAY_DATA_DIR comes from the shell: relative to the working directory, not to the file.
    expect(loadConfigFile(file, { env: { GATEWAY_DATA_DIR: 'elsewhere' } }).store.dataDir).toBe(join(process.cwd(), 'elsewhere'));
    expect(loadConfigFile(file, { env: { GATEWAY_DATA_DIR: '/srv/gw' } }).store).toMatchObject({ kind: 'embedded', dataDir: '/srv/gw' });
  });

  it('names the file when it is not YAML', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'accounts: [\n');
    expect(bootError(() => loadConfigFile(file, { env: {} })).message).toContain('broken.yaml');
  });

  it('names an unset ${VAR} without a default, with its path, instead of an empty-string complaint', () => {
    const err = bootError(() =>
      buildConfig(
        {
          accounts: [{ id: 1, name: 'demo' }],
          apiKeys: [{ name: 'k', account: 'demo', key: '${MY_API_KEY}', permissions: ['READ_DATA'] }],
        },
        { env: {} },
      ),
    );
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.problems).toEqual([
      '/apiKeys/0/key: environment variable MY_API_KEY is not set (give it a value, or a default with ${MY_API_KEY:-default})',
    ]);
  });

  it('reports unset variables, schema problems and inconsistencies in one pass', () => {
    const err = bootError(() =>
      buildConfig(
        {
          server: { httpPort: 'eighty' },
          accounts: [
            { id: 1, name: 'a' },
            { id: 1, name: 'b' },
          ],
          apiKeys: [{ name: 'k', account: 'ghost', key: '${UNSET_KEY}', permissions: ['READ_DATA'] }],
          launch: [{ name: 'svc', module: './nowhere/main.ts' }],
        },
        { env: {}, baseDir: tmpdir() },
      ),
    );
    const text = err.problems.join('\n');
    expect(text).toContain('environment variable UNSET_KEY is not set');
    expect(text).toContain('/server/httpPort: must be integer');
    expect(text).toContain('duplicate account id: 1');
    expect(text).toContain("account 'ghost' is not declared");
    expect(text).toContain(`launch[0] (svc).module: ${join(tmpdir(), 'nowhere/main.ts')} does not exist`);
  });

  it("an optional launch entry's missing module is left to the launcher's warning; a required one's refuses the config", () => {
    const input = (optional: boolean) => ({
      accounts: [{ id: 1, name: 'a' }],
      launch: [{ name: 'extra', module: './nowhere/main.ts', optional }],
    });
    const config = buildConfig(input(true), { env: {}, baseDir: tmpdir() });
    expect(config.launch[0]).toMatchObject({ name: 'extra', module: join(tmpdir(), 'nowhere/main.ts'), optional: true });
    const err = bootError(() => buildConfig(input(false), { env: {}, baseDir: tmpdir() }));
    expect(err.problems).toEqual([
      `launch[0] (extra).module: ${join(tmpdir(), 'nowhere/main.ts')} does not exist (relative paths are relative to the config file, ${tmpdir()})`,
    ]);
  });

  it('a missing config file is one coded line', () => {
    const err = bootError(() => loadConfigFile(join(tmpdir(), 'no-such-gateway.yaml'), { env: {} }));
    expect(err.code).toBe('CONFIG_UNREADABLE');
    expect(err.message).toBe(`CONFIG_UNREADABLE: cannot read config file ${join(tmpdir(), 'no-such-gateway.yaml')}: no such file`);
  });
});
