import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { GatewayConfig, RegistryModelConfig, RegistryProviderConfig } from '../config/types.js';
import { BootError } from '../errors.js';
import { compileSchema, formatAjvErrors } from '../validation/ajv.js';
import parametersSchema from '../../schemas/registry/parameters.schema.json' with { type: 'json' };
import registryFileSchema from '../../schemas/registry/registry-file.schema.json' with { type: 'json' };
import type { ConstantDefinition, ModelParameters, Provider, VariableDefinition } from './types.js';

/** One model entry of the config or a file, normalised; listed under each of its providers. */
export interface ModelEntry {
  readonly name: string;
  readonly displayName: string;
  readonly providers: readonly string[];
  readonly parameters: ModelParameters;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Per million input and output tokens (core/userspace/prices.ts): spend and money budgets. */
  readonly prices?: { readonly input: number; readonly output: number; readonly currency: string };
  /** Where it was declared, for boot errors. */
  readonly source: string;
}

export interface RegistryContent {
  readonly providers: readonly Provider[];
  readonly models: readonly ModelEntry[];
}

const validateParameters = compileSchema('settings', parametersSchema);
const validateFile = compileSchema('settings', registryFileSchema);

/**
 * Reads the registry from the config and the files it names, checks every definition and normalises
 * it. Every problem found is listed in one REGISTRY_INVALID boot error, each naming its model.
 */
export function readRegistryContent(config: GatewayConfig['registry'], bootTime = new Date()): RegistryContent {
  const problems: string[] = [];
  const providers: { entry: RegistryProviderConfig; source: string }[] = config.providers.map((entry) => ({ entry, source: 'config' }));
  const models: { entry: RegistryModelConfig; source: string }[] = config.models.map((entry) => ({ entry, source: 'config' }));
  for (const file of config.files) {
    const content = readFile(file, problems);
    if (!content) continue;
    providers.push(...content.providers.map((entry) => ({ entry, source: file })));
    models.push(...content.models.map((entry) => ({ entry, source: file })));
  }

  const providerNames = new Set<string>();
  const normalisedProviders: Provider[] = [];
  for (const { entry, source } of providers) {
    if (providerNames.has(entry.name)) problems.push(`provider '${entry.name}' (${source}) is declared twice`);
    providerNames.add(entry.name);
    normalisedProviders.push({ name: entry.name, displayName: entry.displayName ?? entry.name });
  }

  const seen = new Set<string>();
  const normalisedModels: ModelEntry[] = [];
  for (const { entry, source } of models) {
    const label = `model '${entry.name}' (${source})`;
    for (const provider of entry.providers) {
      if (!providerNames.has(provider)) problems.push(`${label}: provider '${provider}' is not declared in providers`);
      const key = `${provider}\u0000${entry.name}`;
      if (seen.has(key)) problems.push(`${label}: provider '${provider}' already has a model of that name`);
      seen.add(key);
    }
    const parameters = checkParameters(entry.parameters ?? {}, label, problems);
    const createdAt = utc(entry.createdAt, `${label}: createdAt`, problems) ?? bootTime.toISOString();
    const updatedAt = utc(entry.updatedAt, `${label}: updatedAt`, problems) ?? createdAt;
    normalisedModels.push({
      name: entry.name,
      displayName: entry.displayName ?? entry.name,
      providers: entry.providers,
      parameters,
      createdAt,
      updatedAt,
      ...(entry.prices ? { prices: entry.prices } : {}),
      source,
    });
  }
  if (problems.length) throw new BootError('REGISTRY_INVALID', 'the model registry has invalid entries', problems);
  return { providers: normalisedProviders, models: normalisedModels };
}

function readFile(path: string, problems: string[]): { providers: RegistryProviderConfig[]; models: RegistryModelConfig[] } | undefined {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    problems.push(`registry file ${path} cannot be read: ${(err as Error).message}`);
    return undefined;
  }
  raw ??= {};
  if (!validateFile(raw)) {
    problems.push(...formatAjvErrors(validateFile.errors).map((p) => `registry file ${path}: ${p}`));
    return undefined;
  }
  return raw as { providers: RegistryProviderConfig[]; models: RegistryModelConfig[] };
}

/**
 * The definitions checked against schemas/registry/parameters.schema.json, then for consistency:
 * min ≤ max, minLength ≤ maxLength, a default within min/max, an enum default among its values,
 * and names unique across constants and variables.
 */
function checkParameters(raw: Readonly<Record<string, unknown>>, label: string, problems: string[]): ModelParameters {
  const input = structuredClone(raw) as Record<string, unknown>;
  if (!validateParameters(input)) {
    // An if/then mismatch repeats the error found inside `then`; only the inner one is useful.
    const errors = validateParameters.errors?.filter((e) => e.keyword !== 'if');
    problems.push(...formatAjvErrors(errors).map((p) => `${label}: parameters${p}`));
    return { constants: [], variables: [] };
  }
  const constants = (input.constants as Record<string, any>[]).map(normaliseConstant);
  const variables = (input.variables as Record<string, any>[]).map(normaliseVariable);
  const names = new Set<string>();
  for (const d of [...constants, ...variables]) {
    if (names.has(d.name)) problems.push(`${label}: parameter '${d.name}' is defined twice`);
    names.add(d.name);
  }
  for (const v of variables) {
    const where = `${label}: variable '${v.name}'`;
    switch (v.type) {
      case 'integer':
      case 'number':
        if (v.min !== undefined && v.max !== undefined && v.min > v.max)
          problems.push(`${where}: min ${v.min} is greater than max ${v.max}`);
        if (v.default !== undefined && v.min !== undefined && v.default < v.min)
          problems.push(`${where}: default ${v.default} is below min ${v.min}`);
        if (v.default !== undefined && v.max !== undefined && v.default > v.max)
          problems.push(`${where}: default ${v.default} is above max ${v.max}`);
        break;
      case 'string':
        if (v.minLength !== undefined && v.maxLength !== undefined && v.minLength > v.maxLength) {
          problems.push(`${where}: minLength ${v.minLength} is greater than maxLength ${v.maxLength}`);
        }
        break;
      case 'enum':
        if (v.default !== undefined && !v.values.includes(v.default)) {
          problems.push(`${where}: default '${v.default}' is not one of its values (${v.values.join(', ')})`);
        }
        break;
      case 'boolean':
        break;
    }
  }
  return { constants, variables };
}

/** A definition with its keys in one order (type, name, description, then the type's fields). */
function normaliseConstant(d: Record<string, any>): ConstantDefinition {
  return {
    type: d.type,
    name: d.name,
    ...(d.description !== undefined ? { description: d.description } : {}),
    value: d.value,
  } as ConstantDefinition;
}

function normaliseVariable(d: Record<string, any>): VariableDefinition {
  const out: Record<string, unknown> = { type: d.type, name: d.name };
  if (d.description !== undefined) out.description = d.description;
  for (const key of ['values', 'min', 'max', 'minLength', 'maxLength', 'default']) if (d[key] !== undefined) out[key] = d[key];
  out.required = d.required === true;
  return out as unknown as VariableDefinition;
}

/** An ISO 8601 date-time with a zone (checked by the schema) re-expressed in UTC. */
function utc(value: string | undefined, where: string, problems: string[]): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    problems.push(`${where} '${value}' is not an ISO 8601 date-time`);
    return undefined;
  }
  return new Date(ms).toISOString();
}
