import { gatewayError, type Caller, type PluginContext, type ServiceEntry } from '../../../core/plugins/index.js';

/** A chat-adapter `model` value `<author>/<service>[/model]` split into its parts. */
export interface ModelId {
  /** Account name (or ID) of the service owner. */
  readonly author: string;
  readonly service: string;
  /** Everything after the second `/`, slashes included (upstream ids such as `meta-llama/Llama-3`). */
  readonly model: string | undefined;
}

/** Splits `<author>/<service>[/model]`; undefined when there are fewer than two non-empty parts. */
export function parseModelId(id: string): ModelId | undefined {
  const first = id.indexOf('/');
  if (first <= 0) return undefined;
  const second = id.indexOf('/', first + 1);
  const author = id.slice(0, first);
  if (second < 0) {
    const service = id.slice(first + 1);
    return service ? { author, service, model: undefined } : undefined;
  }
  const service = id.slice(first + 1, second);
  const model = id.slice(second + 1);
  return service ? { author, service, model: model || undefined } : undefined;
}

export interface ChatTarget {
  readonly id: ModelId;
  readonly service: ServiceEntry;
}

/**
 * The service a `model` value names, for a caller who may call it. An unknown author or service is
 * 404 MODEL_NOT_FOUND (OpenAI's status for an unknown model, so SDKs raise NotFoundError), not the
 * 400 ACCOUNT_NOT_FOUND / SERVICE_NOT_FOUND of the platform API. A private service of another account
 * answers the same 404, as OpenAI does for a model the key cannot use: a key learns nothing about
 * services it may not call, and `GET models` does not list them either.
 */
export function resolveChatTarget(ctx: PluginContext<any>, caller: Caller, model: string): ChatTarget {
  const id = parseModelId(model);
  const account = id && ctx.directory.findAccount(id.author);
  const service = account && ctx.directory.findService(account, id.service);
  if (!id || !service || !canCall(caller, service)) throw gatewayError('MODEL_NOT_FOUND', { param: 'model', args: { model } });
  ctx.pipeline.checkAccess(caller, service, { account: id.author, model: id.service });
  return { id, service };
}

/** Whether `caller` may call `service`: its own services and public ones. */
export function canCall(caller: Caller, service: ServiceEntry): boolean {
  return service.public || service.accountId === caller.account.id;
}
