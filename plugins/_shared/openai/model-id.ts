import { asChatAdapterError, gatewayError, type Caller, type PluginContext, type ServiceEntry } from '../../../core/plugins/index.js';
import { canCall } from './can-call.js';
import { unknownModelHint } from './model-hint.js';

export { canCall };

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
  const target = findChatTarget(ctx, model);
  if (!target || !canCall(caller, target.service)) {
    throw gatewayError('MODEL_NOT_FOUND', { param: 'model', args: { model, hint: unknownModelHint(ctx, caller, model) } });
  }
  try {
    ctx.pipeline.checkAccess(caller, target.service, { account: target.id.author, model: target.id.service });
  } catch (err) {
    // A spent budget is OpenAI's 429 insufficient_quota here (the platform API keeps 402).
    throw asChatAdapterError(err);
  }
  return target;
}

/**
 * The service a `model` value names, by `<author>/<service>[/model]` or, for a name without a slash,
 * by a service alias (`services[].aliases`), which stands for `<account>/<service>` itself.
 */
export function findChatTarget(ctx: PluginContext<any>, model: string): ChatTarget | undefined {
  if (!model.includes('/')) {
    const service = ctx.directory.serviceByAlias(model);
    return service && { id: { author: service.account.name, service: service.name, model: undefined }, service };
  }
  const id = parseModelId(model);
  const account = id && ctx.directory.findAccount(id.author);
  const service = account && ctx.directory.findService(account, id.service);
  return id && service ? { id, service } : undefined;
}
