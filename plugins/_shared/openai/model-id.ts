import {
  asChatAdapterError,
  gatewayError,
  type Caller,
  type GatewayError,
  type PluginContext,
  type ServiceEntry,
  type ServiceRef,
} from '../../../core/plugins/index.js';
import { unknownModelHint } from './model-hint.js';

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
  /** The service as the `model` value named it. */
  readonly ref: ServiceRef;
}

/**
 * The chat adapters' answer for a `model` that names no service the caller may call: 404
 * MODEL_NOT_FOUND (OpenAI's status for an unknown model, so SDKs raise NotFoundError), not the 400
 * ACCOUNT_NOT_FOUND / SERVICE_NOT_FOUND of the platform API. A private service of another account
 * answers the same 404, as OpenAI does for a model the key cannot use: a key learns nothing about
 * services it may not call, and `GET models` does not list them either.
 */
export function modelNotFound(ctx: PluginContext<any>, caller: Caller, model: string): GatewayError {
  return gatewayError('MODEL_NOT_FOUND', { param: 'model', args: { model, hint: unknownModelHint(ctx, caller, model) } });
}

/** The service a `model` value names (404 `modelNotFound` when none); whether the caller may call it is admission's check. */
export function chatTargetOrNotFound(ctx: PluginContext<any>, caller: Caller, model: string): ChatTarget {
  const target = findChatTarget(ctx, model);
  if (!target) throw modelNotFound(ctx, caller, model);
  return target;
}

/**
 * The service a `model` value names, for a caller who may call it (404 `modelNotFound` otherwise),
 * for a service named beside the one admission admitted (a request's `models` fallbacks). The access
 * check is the pipeline's, with the chat adapters' refusal.
 */
export function resolveChatTarget(ctx: PluginContext<any>, caller: Caller, model: string): ChatTarget {
  const target = chatTargetOrNotFound(ctx, caller, model);
  ctx.pipeline.checkAccess(caller, target.service, target.ref, () => modelNotFound(ctx, caller, model), asChatAdapterError);
  return target;
}

/**
 * The service a `model` value names, by `<author>/<service>[/model]` or, for a name without a slash,
 * by a service alias (`services[].aliases`), which stands for `<account>/<service>` itself.
 */
export function findChatTarget(ctx: PluginContext<any>, model: string): ChatTarget | undefined {
  if (!model.includes('/')) {
    const service = ctx.directory.serviceByAlias(model);
    return (
      service && {
        id: { author: service.account.name, service: service.name, model: undefined },
        service,
        ref: { account: service.account.name, model: service.name },
      }
    );
  }
  const id = parseModelId(model);
  const account = id && ctx.directory.findAccount(id.author);
  const service = account && ctx.directory.findService(account, id.service);
  return id && service ? { id, service, ref: { account: id.author, model: id.service } } : undefined;
}
