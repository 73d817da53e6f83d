import type { GatewayConfig, ServiceConfig } from '../config/types.js';
import { BootError, gatewayError, isGatewayError } from '../errors.js';
import type { ConfigValidator } from '../admission/pipeline.js';
import { readRegistryContent, type RegistryContent } from './build.js';
import { compileVariables, type CompiledVariables } from './compile.js';
import type { ConfigSchema, Model, Provider } from './types.js';

interface Listed {
  readonly model: Model;
  readonly compiled: CompiledVariables;
}

/** The service fields the registry reads; a ServiceEntry (also a derived one) has them. */
type ServiceRef = Pick<ServiceConfig, 'name' | 'provider' | 'defaultModel'>;

/**
 * The model registry, built once at boot and then read-only: what the registry endpoints serve, and
 * the validator of predict configs against each model's variables (registered on the pipeline, so
 * sync, async, gRPC and the chat adapters all use this one check).
 *
 * @remarks
 * Which model a config is checked against: the model the request names (`modelName`, e.g. the third
 * part of a chat adapter's `model`), else the config's own `model` field when it is a string, else
 * the service's `defaultModel`. The model is looked up under the service's `provider`; a service
 * without one finds models by name when the name is unique in the registry. A config that names a
 * model the registry does not know is not checked: the service is the authority on its own models.
 * Nothing is checked when no config is sent at all (the service's own defaults apply), and registry
 * defaults are never written into a config: the service receives exactly what the caller sent.
 */
export class Registry implements ConfigValidator {
  readonly #providers: readonly Provider[];
  readonly #byProvider = new Map<string, Map<string, Listed>>();
  readonly #lists = new Map<string, readonly Model[]>();
  /** Model name → its compiled variables, or null when two different entries share the name. */
  readonly #byName = new Map<string, CompiledVariables | null>();
  /** Model name → its price (`registry.models[].prices`), for the cost of answers. */
  readonly prices = new Map<string, { readonly input: number; readonly output: number; readonly currency: string }>();

  constructor(content: RegistryContent) {
    this.#providers = content.providers;
    for (const provider of content.providers) this.#byProvider.set(provider.name, new Map());
    for (const entry of content.models) {
      const compiled = compileVariables(entry.name, entry.parameters.variables);
      for (const providerName of entry.providers) {
        const provider = content.providers.find((p) => p.name === providerName)!;
        const model: Model = {
          name: entry.name,
          displayName: entry.displayName,
          provider,
          parameters: entry.parameters,
          createdAt: entry.createdAt,
          updatedAt: entry.updatedAt,
        };
        this.#byProvider.get(providerName)!.set(entry.name, { model, compiled });
      }
      if (entry.prices) this.prices.set(entry.name, entry.prices);
      const known = this.#byName.get(entry.name);
      this.#byName.set(entry.name, known === undefined || known === compiled ? compiled : null);
    }
    for (const [name, models] of this.#byProvider)
      this.#lists.set(
        name,
        [...models.values()].map((l) => l.model),
      );
  }

  providers(): readonly Provider[] {
    return this.#providers;
  }

  /** The models a provider offers, in declaration order; undefined for an unknown provider. */
  models(providerName: string): readonly Model[] | undefined {
    return this.#lists.get(providerName);
  }

  model(providerName: string, modelName: string): Model | undefined {
    return this.#byProvider.get(providerName)?.get(modelName)?.model;
  }

  /** The JSON Schema the gateway compiled for the model's variables. */
  configSchema(providerName: string, modelName: string): ConfigSchema | undefined {
    return this.#byProvider.get(providerName)?.get(modelName)?.compiled.schema;
  }

  validate(service: ServiceRef, config: unknown, modelName?: string): void {
    if (config === undefined || config === null) return;
    const isObject = typeof config === 'object' && !Array.isArray(config);
    const named = modelName ?? (isObject ? ownModel(config as Record<string, unknown>) : undefined);
    const name = named ?? service.defaultModel;
    if (name === undefined) return;
    const compiled = this.#compiled(service.provider, name);
    if (!compiled) return;
    if (!isObject) throw gatewayError('VALIDATION_FAILED', { param: 'config', args: { reason: 'config must be a JSON object' } });
    compiled.check(config as Record<string, unknown>);
  }

  #compiled(provider: string | undefined, model: string): CompiledVariables | undefined {
    if (provider !== undefined) return this.#byProvider.get(provider)?.get(model)?.compiled;
    return this.#byName.get(model) ?? undefined;
  }

  /**
   * Boot check of the services against the registry: their provider and default model exist, and
   * each named config passes the check of the model it names.
   */
  checkServices(services: readonly ServiceConfig[]): string[] {
    const problems: string[] = [];
    for (const service of services) {
      const where = `service '${service.name}'`;
      if (service.provider !== undefined && !this.#byProvider.has(service.provider)) {
        problems.push(`${where}: provider '${service.provider}' is not in the registry`);
        continue;
      }
      if (service.defaultModel !== undefined) {
        if (service.provider !== undefined && !this.#byProvider.get(service.provider)!.has(service.defaultModel)) {
          problems.push(`${where}: provider '${service.provider}' has no model '${service.defaultModel}'`);
          continue;
        }
        if (service.provider === undefined) {
          const found = this.#byName.get(service.defaultModel);
          if (found === undefined) problems.push(`${where}: defaultModel '${service.defaultModel}' is not in the registry`);
          if (found === null)
            problems.push(`${where}: defaultModel '${service.defaultModel}' is defined by several providers; set the service's provider`);
          if (!found) continue;
        }
      }
      for (const named of service.configs) {
        try {
          this.validate(service, named.config);
        } catch (err) {
          if (!isGatewayError(err)) throw err;
          problems.push(`${where}: config ${named.id}${named.name ? ` (${named.name})` : ''}: ${err.message}`);
        }
      }
    }
    return problems;
  }
}

function ownModel(config: Record<string, unknown>): string | undefined {
  const model = config.model;
  return typeof model === 'string' ? model : undefined;
}

/** Builds the registry from the config (and its files) and checks the services against it. */
export function createRegistry(config: GatewayConfig, bootTime = new Date()): Registry {
  const registry = new Registry(readRegistryContent(config.registry, bootTime));
  const problems = registry.checkServices(config.services);
  if (problems.length) throw new BootError('REGISTRY_INVALID', 'services do not match the model registry', problems);
  return registry;
}
