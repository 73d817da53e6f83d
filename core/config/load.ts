import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { hashSecret } from '../admission/secret-hashes.js';
import { BootError } from '../errors.js';
import { runnableModule } from '../modules/build-paths.js';
import { compileSchema, formatAjvErrors } from '../validation/ajv.js';
import configSchema from '../../schemas/config.schema.json' with { type: 'json' };
import registryFileSchema from '../../schemas/registry/registry-file.schema.json' with { type: 'json' };
import type { GatewayConfig, Permission } from './types.js';
import type { Budget } from '../userspace/budgets.js';
import { fallbackProblems, normaliseService, upstreamProblem } from './service-config.js';
import { resolveWorkers, workersFromEnv, workersProblems } from './workers.js';

export interface LoadOptions {
  /** Environment used for `${VAR}` substitution and the port/store overrides; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Directory that relative paths resolve against when the config is given as an object. */
  baseDir?: string;
}

/** Reads a YAML or JSON config file (YAML is a superset of JSON) and validates it. */
export function loadConfigFile(path: string, options: LoadOptions = {}): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new BootError('CONFIG_UNREADABLE', `cannot read config file ${path}: ${reason}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new BootError('CONFIG_INVALID', `config file ${path} is not valid YAML or JSON`, [(err as Error).message]);
  }
  return buildConfig(raw, { ...options, baseDir: dirname(resolve(path)) });
}

// The config's registry section refers to the registry file's schema by its $id: compiled first.
compileSchema('settings', registryFileSchema);
const validateSchema = compileSchema('settings', configSchema);

/**
 * Validates a raw config object, applies environment overrides and defaults, hashes plain secrets,
 * resolves account references and relative paths, and freezes the result. Every problem found is
 * listed in one CONFIG_INVALID error (unset variables, schema violations, inconsistencies, missing
 * files), so a broken file is fixed in one pass.
 */
export function buildConfig(raw: unknown, options: LoadOptions = {}): GatewayConfig {
  const env = options.env ?? process.env;
  const baseDir = options.baseDir ?? process.cwd();
  const problems: string[] = [];
  const input = substituteEnv(structuredClone(raw ?? {}), env, '', problems) as Record<string, any>;
  applyEnvOverrides(input, env);

  const schemaValid = validateSchema(input);
  if (!schemaValid) {
    // An unset variable already has its own line; the schema's complaint about the empty string it left is noise.
    const unsetPaths = new Set(problems.map((p) => p.split(':')[0]));
    problems.push(...formatAjvErrors(validateSchema.errors).filter((p) => !unsetPaths.has(p.split(':')[0])));
  }
  let config: GatewayConfig | undefined;
  try {
    config = normalise(input, baseDir, problems);
  } catch (err) {
    // An input the schema rejected may not have the shape normalise reads; its problems are listed already.
    if (schemaValid) throw err;
  }
  if (problems.length || !config) {
    throw new BootError(
      'CONFIG_INVALID',
      schemaValid ? 'the configuration is inconsistent' : 'the configuration does not match schemas/config.schema.json',
      problems,
    );
  }
  return deepFreeze(config);
}

const ENV_PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * `${VAR}` and `${VAR:-default}` in any string value; secrets stay out of the file this way. A
 * variable that is unset and has no default is a problem naming it (an empty string would only
 * surface later as a puzzling "too short" or "required" complaint).
 */
function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, path: string, problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_PATTERN, (_m, name: string, fallback: string | undefined) => {
      const found = env[name] ?? fallback;
      if (found === undefined)
        problems.push(`${path || '/'}: environment variable ${name} is not set (give it a value, or a default with \${${name}:-default})`);
      return found ?? '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, `${path}/${i}`, problems));
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) (value as Record<string, unknown>)[k] = substituteEnv(v, env, `${path}/${k}`, problems);
  }
  return value;
}

function applyEnvOverrides(input: Record<string, any>, env: NodeJS.ProcessEnv): void {
  const server = (input.server ??= {});
  const asPort = (v: string) => (/^\d+$/.test(v) ? Number(v) : v);
  if (env.HTTP_PORT) server.httpPort = asPort(env.HTTP_PORT);
  if (env.GRPC_PORT) server.grpcPort = asPort(env.GRPC_PORT);
  if (env.GATEWAY_HOST) server.host = env.GATEWAY_HOST;
  if (env.GATEWAY_WORKERS) server.workers = workersFromEnv(env.GATEWAY_WORKERS);
  if (env.MONGODB_URI) {
    input.store = { ...(input.store ?? {}), kind: 'mongodb', mongodbUri: env.MONGODB_URI };
  }
  // From the shell, so relative to where the gateway is started (a path in the file is relative to the file).
  if (env.GATEWAY_DATA_DIR) input.store = { ...(input.store ?? {}), dataDir: resolve(env.GATEWAY_DATA_DIR) };
  // The OpenTelemetry exporter variables turn tracing on when the config names no endpoint: the
  // traces one as given, the generic one as a base URL (the OTLP spec's rule).
  const tracing = (input.tracing ??= {});
  const otlp =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    (env.OTEL_EXPORTER_OTLP_ENDPOINT && `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`);
  if (otlp && tracing.otlpEndpoint === undefined) tracing.otlpEndpoint = otlp;
}

function normalise(input: Record<string, any>, baseDir: string, problems: string[]): GatewayConfig {
  const accounts = (input.accounts as any[]).map((a) => ({
    id: a.id as number,
    name: a.name as string,
    requestsPerSecond: (a.requestsPerSecond as number | undefined) ?? (input.limits.defaultRequestsPerSecond as number),
    ...(a.inputBytesPerSecond !== undefined ? { inputBytesPerSecond: a.inputBytesPerSecond as number } : {}),
    blocked: a.blocked as boolean,
    ...(a.budgets?.length ? { budgets: a.budgets as Budget[] } : {}),
  }));
  reportDuplicates(
    accounts.map((a) => a.id),
    'account id',
    problems,
  );
  reportDuplicates(
    accounts.map((a) => a.name),
    'account name',
    problems,
  );

  const accountId = (ref: string | number, where: string): number => {
    const found =
      typeof ref === 'number' || /^\d+$/.test(ref) ? accounts.find((a) => a.id === Number(ref)) : accounts.find((a) => a.name === ref);
    if (!found) problems.push(`${where}: account '${ref}' is not declared in accounts`);
    return found?.id ?? -1;
  };

  const apiKeys = (input.apiKeys as any[]).map((k, i) => ({
    name: k.name as string,
    accountId: accountId(k.account, `apiKeys[${i}] (${k.name})`),
    keyHash: (k.keyHash as string | undefined) ?? hashSecret(k.key as string),
    permissions: k.permissions as Permission[],
    followTraceSampling: k.followTraceSampling === true,
  }));
  reportDuplicates(
    apiKeys.map((k) => k.keyHash),
    'API key (the same key is declared twice)',
    problems,
  );

  const services = (input.services as any[]).map((s, i) => normaliseService(s, accountId(s.account, `services[${i}] (${s.name})`)));
  reportDuplicates(
    services.map((s) => s.id),
    'service id',
    problems,
  );
  reportDuplicates(
    services.map((s) => `${s.accountId}/${s.name}`),
    'service name within an account',
    problems,
  );
  reportDuplicates(
    services.flatMap((s) => s.aliases ?? []),
    'service alias',
    problems,
  );
  reportDuplicates(
    services.flatMap((s) => s.connectionTokenHashes),
    'connection token (shared by two services)',
    problems,
  );
  services.forEach((s, i) =>
    reportDuplicates(
      s.configs.map((c: any) => c.id),
      `configs id of services[${i}]`,
      problems,
    ),
  );

  const fallbackTarget = (account: string, name: string) => {
    const owner = accounts.find((a) => a.name === account || String(a.id) === account);
    return owner && services.find((t) => t.accountId === owner.id && t.name === name);
  };
  services.forEach((s, i) => {
    for (const problem of fallbackProblems(s, fallbackTarget)) problems.push(`services[${i}] (${s.name}): ${problem}`);
    const unserved = s.upstream && upstreamProblem(input.plugins.enabled as string[]);
    if (unserved) problems.push(`services[${i}] (${s.name}) ${unserved}`);
  });
  (input.userSpace.users as any[]).forEach((u, i) => {
    for (const ref of Object.keys(u.accounts)) accountId(ref, `userSpace.users[${i}] (${u.email}).accounts`);
  });
  reportDuplicates(
    (input.userSpace.users as any[]).map((u) => String(u.email).toLowerCase()),
    'userSpace.users email',
    problems,
  );
  if (input.gate.servers.length > 1 && !input.gate.currentServer) {
    problems.push('gate.currentServer is required when gate.servers lists more than one gateway');
  }
  const workers = resolveWorkers(input.server.workers);
  problems.push(
    ...workersProblems({
      workers,
      storeKind: input.store.kind,
      enabledPlugins: input.plugins.enabled,
      pluginOptions: input.plugins.options,
      customPlugins: input.plugins.custom,
      clusterServers: input.gate.servers,
      httpPort: input.server.httpPort,
      grpcPort: input.server.grpcPort,
      workerGrpcPort: input.server.workerGrpcPort,
    }),
  );
  if (input.store.kind === 'mongodb' && !input.store.mongodbUri) {
    problems.push('store.mongodbUri (or MONGODB_URI) is required when store.kind is mongodb');
  }

  const dataDir = resolve(baseDir, input.store.dataDir);
  const registryFiles = (input.registry.files as string[]).map((f) => resolve(baseDir, f));
  const custom = (input.plugins.custom as any[]).map((c) => ({ path: resolve(baseDir, c.path), enabled: c.enabled }));
  const launch = (input.launch as any[]).map((l) => ({
    name: l.name,
    module: resolve(baseDir, l.module),
    env: l.env,
    requires: l.requires,
    optional: l.optional,
  }));
  // Paths are relative to the config file: a copied config names the module it could not find
  // instead of launching a process that crashes on it again and again. The compiled gateway runs a
  // `.ts` module's compiled `.js` (core/modules/build-paths.ts), so either counts.
  const mustExist = (what: string, path: string) => {
    if (!existsSync(runnableModule(path)))
      problems.push(`${what}: ${path} does not exist (relative paths are relative to the config file, ${baseDir})`);
  };
  // (Missing registry files and plugin modules are named by REGISTRY_INVALID and PLUGIN_NOT_FOUND.)
  // An optional entry's missing module is the launcher's warning instead (launchServices).
  launch.forEach((l, i) => {
    if (!l.optional) mustExist(`launch[${i}] (${l.name}).module`, l.module);
  });

  return {
    server: { ...input.server, workers },
    gate: input.gate,
    tracing: input.tracing,
    store: { ...input.store, dataDir },
    limits: input.limits,
    accounts,
    apiKeys,
    services,
    registry: { ...input.registry, files: registryFiles },
    plugins: { enabled: input.plugins.enabled, custom, options: input.plugins.options },
    launch,
    userSpace: input.userSpace,
    baseDir,
  };
}

function reportDuplicates(values: readonly (string | number)[], what: string, problems: string[]): void {
  const seen = new Set<string | number>();
  for (const v of values) {
    if (seen.has(v)) problems.push(`duplicate ${what}: ${what.startsWith('API key') || what.startsWith('connection') ? '(secret)' : v}`);
    seen.add(v);
  }
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
