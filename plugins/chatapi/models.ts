import type { Caller, PluginContext, ServiceEntry } from '../../core/plugins/index.js';
import { parseModelId } from '../_shared/openai/model-id.js';

/** An entry of `GET models` in OpenAI's shape. */
export interface OpenAiModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

interface RegistryModel {
  name: string;
  created: number;
}

/**
 * The model ids a key can use, from the services it may call (its own and public ones): each service
 * as `<author>/<service>` and by each of its aliases, and, for each registry model of the service (its `defaultModel` and the
 * registry models of its `provider`), `<author>/<service>/<model>`.
 */
export class ModelCatalog {
  readonly #directory: PluginContext['directory'];
  readonly #pipeline: PluginContext['pipeline'];
  readonly #byProvider = new Map<string, RegistryModel[]>();
  readonly #byName = new Map<string, RegistryModel>();
  readonly #bootTime = Math.floor(Date.now() / 1000);

  constructor(ctx: PluginContext<any>) {
    this.#directory = ctx.directory;
    this.#pipeline = ctx.pipeline;
    for (const model of ctx.config.registry.models) {
      const created = model.createdAt ? Math.floor(Date.parse(model.createdAt) / 1000) || this.#bootTime : this.#bootTime;
      const entry = { name: model.name, created };
      this.#byName.set(model.name, entry);
      for (const provider of model.providers) {
        let list = this.#byProvider.get(provider);
        if (!list) this.#byProvider.set(provider, (list = []));
        list.push(entry);
      }
    }
  }

  /** Registry models of a service: its default model first, then the other models of its provider. */
  #modelsOf(service: ServiceEntry): RegistryModel[] {
    const out: RegistryModel[] = [];
    if (service.defaultModel) out.push(this.#byName.get(service.defaultModel) ?? { name: service.defaultModel, created: this.#bootTime });
    for (const model of (service.provider && this.#byProvider.get(service.provider)) || []) {
      if (model.name !== service.defaultModel) out.push(model);
    }
    return out;
  }

  list(caller: Caller): OpenAiModel[] {
    const out: OpenAiModel[] = [];
    for (const service of this.#directory.services()) {
      if (!this.#pipeline.mayCall(caller, service)) continue;
      const author = service.account.name;
      const base = `${author}/${service.name}`;
      out.push({ id: base, object: 'model', created: this.#bootTime, owned_by: author });
      for (const alias of service.aliases ?? []) out.push({ id: alias, object: 'model', created: this.#bootTime, owned_by: author });
      for (const model of this.#modelsOf(service)) {
        out.push({ id: `${base}/${model.name}`, object: 'model', created: model.created, owned_by: author });
      }
    }
    return out;
  }

  /** One model id the caller can use; undefined when it names nothing the caller may call. */
  find(caller: Caller, id: string): OpenAiModel | undefined {
    const aliased = id.includes('/') ? undefined : this.#directory.serviceByAlias(id);
    if (aliased)
      return this.#pipeline.mayCall(caller, aliased)
        ? { id, object: 'model', created: this.#bootTime, owned_by: aliased.account.name }
        : undefined;
    const parsed = parseModelId(id);
    const account = parsed && this.#directory.findAccount(parsed.author);
    const service = account && this.#directory.findService(account, parsed.service);
    if (!parsed || !service || !this.#pipeline.mayCall(caller, service)) return undefined;
    const author = service.account.name;
    const base = `${author}/${service.name}`;
    if (parsed.model === undefined) return { id: base, object: 'model', created: this.#bootTime, owned_by: author };
    const model = this.#modelsOf(service).find((m) => m.name === parsed.model);
    return model && { id: `${base}/${model.name}`, object: 'model', created: model.created, owned_by: author };
  }
}
