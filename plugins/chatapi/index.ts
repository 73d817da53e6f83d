/**
 * The standard chat adapter: OpenAI's REST API in front of the platform's services. A request's
 * `model` is `<author>/<service>[/model]`; its body is split into predict data (`model`, `messages`,
 * `stream`; `prompt` for completions, `input` for embeddings) and predict config (every other field,
 * validated against the registry model first), and the service's answer goes back unchanged, with
 * `id`, `object`, `created` and `model` filled in when the service leaves them out. The Responses
 * API (responses/) and the Anthropic Messages API (messages/) are translated to the same chat predict.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { callerOf, definePlugin, gatewayError, type Caller, type FallbackTarget, type PluginContext } from '../../core/plugins/index.js';
import { completeAnswer, mergeChunks, wholeAnswerAsEvents, type AnswerDefaults } from '../_shared/openai/answers.js';
import { CHAT_KEY, chatRequest } from '../_shared/openai/admission.js';
import { OPENAI_DONE, openAiErrorEvent, openAiEvent } from '../_shared/openai/events.js';
import { resolveChatTarget } from '../_shared/openai/model-id.js';
import { markServedBy } from '../_shared/openai/served-by.js';
import { affinityKey, sessionKey } from '../_shared/openai/affinity.js';
import { collectAnswer, relaySse, type SseFormat } from '../_shared/openai/relay.js';
import { findUsage, tokenCounts, type Usage } from '../_shared/openai/usage.js';
import { compileBodyCheck } from '../_shared/openai/validate.js';
import { openChatCall } from '../_shared/openai/open-call.js';
import { mountCors } from '../_shared/http/cors.js';
import { mountAliasHint, routePaths } from './alias.js';
import { CHATAPI_OPTIONS_SCHEMA, type ChatApiOptions } from './options.js';
import { ModelCatalog } from './models.js';
import { ReasoningSeal } from '../_shared/openai/reasoning-seal.js';
import { ResponseStoreHolder } from './responses/open-store.js';
import { mountResponses } from './responses/routes.js';
import { mountMessages } from './messages/routes.js';
import { CHAT_BODY, COMPLETIONS_BODY, EMBEDDINGS_BODY, type OpenAiBody } from './schemas.js';
import { encodeEmbeddings, predictOf, splitRequest, type Endpoint } from './transform.js';

export type { ChatApiOptions };

const BASE = '/api/adapters/chatapi';

const OPENAI_SSE: SseFormat<AnswerDefaults> = {
  partial: openAiEvent,
  whole: wholeAnswerAsEvents,
  error: openAiErrorEvent,
  end: OPENAI_DONE,
};

const ENDPOINTS: Record<Endpoint, { check: (body: unknown) => OpenAiBody; idPrefix: string; object: string }> = {
  chat: { check: compileBodyCheck<OpenAiBody>(CHAT_BODY), idPrefix: 'chatcmpl-', object: 'chat.completion' },
  completions: { check: compileBodyCheck<OpenAiBody>(COMPLETIONS_BODY), idPrefix: 'cmpl-', object: 'text_completion' },
  embeddings: { check: compileBodyCheck<OpenAiBody>(EMBEDDINGS_BODY), idPrefix: 'emb-', object: 'list' },
};

export default definePlugin<ChatApiOptions>({
  name: 'chatapi',
  description: 'OpenAI-compatible chat adapter: chat/completions, completions, embeddings, models, responses; Anthropic v1/messages',
  configSchema: CHATAPI_OPTIONS_SCHEMA,
  create(ctx) {
    // This gateway's stored Responses, opened on first use.
    const responseStore = new ResponseStoreHolder(ctx, ctx.options.responses);
    return {
      routes: (router) => mountChatApi(router, ctx, responseStore),
      stop: () => responseStore.close(),
    };
  },
});

function mountChatApi(router: Router, ctx: PluginContext<ChatApiOptions>, responseStore: ResponseStoreHolder): void {
  mountCors(router, BASE, ctx.options.cors);
  const { aliasPrefix } = ctx.options;
  if (aliasPrefix) mountCors(router, aliasPrefix, ctx.options.cors);
  /** Every route is served at `<base>/…`, `<base>/v1/…` and `<aliasPrefix>/…`. */
  const route = routePaths(BASE, '{/v1}', aliasPrefix);
  const catalog = new ModelCatalog(ctx);
  const dataTypes = dataTypesOf(ctx);
  const seal = new ReasoningSeal(process.env[ctx.options.reasoningSecretEnv]);
  // Stored responses count against the account's storage quota (limits.storageBytesPerAccount).
  if (ctx.options.responses.store) ctx.pipeline.addStorageMeter(async (accountId) => (await responseStore.get()).storedBytes(accountId));

  /**
   * An answer's usage: its tokens and the model go to the request's record (access log, metrics,
   * usage plugin); the whole usage object to a line of its own when `logUsage` is on.
   */
  const logUsage = (koa: Context, caller: Caller, model: string, usage: Usage | undefined, endpoint = 'responses') => {
    if (usage) ctx.http.reportTokens(koa, tokenCounts(usage), model);
    if (usage && ctx.options.logUsage) {
      ctx.logger.info(
        { requestId: koa.state.requestId, account: caller.account.name, key: caller.keyName, model, endpoint, usage },
        'usage',
      );
    }
  };

  const predict = (endpoint: Endpoint) =>
    ctx.admission.request(
      chatRequest(ctx, ENDPOINTS[endpoint].check),
      async (koa, { caller, raw: { text }, body, target: { id, service } }) => {
        const spec = ENDPOINTS[endpoint];
        const fallbacks = requestFallbacks(ctx, caller, body);
        const split = splitRequest(body, endpoint, id.model ?? service.defaultModel, text);
        ctx.pipeline.validateConfig(service, split.configObject, id.model);

        const stream = endpoint !== 'embeddings' && body.stream === true;
        const types = dataTypes[endpoint]();
        const call = await openChatCall(ctx, koa, caller, service, predictOf(split, types), stream, undefined, {
          fallbacks,
          model: id.model ?? service.defaultModel,
          affinityKey: affinityKey(service, body.messages, sessionKey(koa, body)),
        });
        const defaults: AnswerDefaults = {
          id: `${spec.idPrefix}${String(koa.state.requestId)}`,
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          object: spec.object,
          includeUsage: body.stream_options?.include_usage === true,
        };
        let usage: Usage | undefined;
        if (stream) {
          usage = await relaySse(koa, call, OPENAI_SSE, defaults, service.name);
        } else {
          const answer = await collectAnswer(call, service.name);
          const text =
            endpoint === 'embeddings'
              ? encodeEmbeddings(
                  answer.whole ?? answer.parts.at(-1)!,
                  body.encoding_format === 'base64' ? 'base64' : 'float',
                  defaults,
                  service.name,
                )
              : answer.whole !== undefined
                ? completeAnswer(answer.whole, defaults)
                : mergeChunks(answer.parts, defaults);
          usage = findUsage(text);
          koa.type = 'application/json';
          koa.body = markServedBy(koa, call, text);
        }
        logUsage(koa, caller, body.model, usage, endpoint);
      },
    );

  router.post(route('chat/completions'), predict('chat'));
  router.post(route('completions'), predict('completions'));
  router.post(route('embeddings'), predict('embeddings'));

  mountResponses(router, {
    ctx,
    route,
    store: () => responseStore.get(),
    options: ctx.options.responses,
    chatTypes: dataTypes.chat,
    logUsage,
    seal,
  });
  mountMessages(router, { ctx, route: routePaths(BASE, '/v1', aliasPrefix), chatTypes: dataTypes.chat, logUsage, seal });

  const modelReader = ctx.admission.callerWith(CHAT_KEY, 'MODEL_REQUESTS');
  router.get(route('models'), modelReader, (koa) => {
    koa.body = { object: 'list', data: catalog.list(callerOf(koa)) };
  });
  // Model ids contain slashes, sent raw by some clients and as %2F by others: the wildcard takes
  // the whole tail, and the router decodes it.
  router.get(route('models/*id'), modelReader, (koa) => {
    const caller = callerOf(koa);
    const id = String(koa.params.id);
    const model = catalog.find(caller, id);
    if (!model) throw gatewayError('MODEL_NOT_FOUND', { param: 'model', args: { model: id } });
    koa.body = model;
  });
  mountAliasHint(router, aliasPrefix);
}

/** Most services one request may name in `models`. */
const MAX_REQUEST_MODELS = 5;

/**
 * The `models: [...]` of a request (OpenRouter's convention): the services to try, in order, after
 * the one `model` names. Each is resolved and access-checked like `model`; the member is removed
 * from the body so that it reaches no service's config. Undefined without it (the service's own
 * configured fallbacks apply).
 */
function requestFallbacks(ctx: PluginContext<any>, caller: Caller, body: Record<string, unknown>): FallbackTarget[] | undefined {
  const models = body.models;
  if (models === undefined) return undefined;
  delete body.models;
  if (!Array.isArray(models) || models.length > MAX_REQUEST_MODELS || models.some((m) => typeof m !== 'string')) {
    throw gatewayError('VALIDATION_FAILED', {
      param: 'models',
      args: { reason: `models must be an array of at most ${MAX_REQUEST_MODELS} model ids` },
    });
  }
  return (models as string[])
    .filter((m) => m !== body.model)
    .map((m) => {
      const { id, service } = resolveChatTarget(ctx, caller, m);
      return id.model ? { service, model: id.model } : { service };
    });
}

/**
 * `dataType` of the predict data and config per endpoint, as references into the published specs.
 * `specsUrl` is read when a request comes: the port is known only once the gateway listens.
 */
function dataTypesOf(ctx: PluginContext<any>): Record<Endpoint, () => { data?: string; config?: string }> {
  let url = '';
  let chat: { data: string; config: string } = { data: '', config: '' };
  const none = {};
  return {
    chat: () => {
      if (url !== ctx.specsUrl) {
        url = ctx.specsUrl;
        chat = { data: `${url}/gpt.json#/ChatCompletionRequest`, config: `${url}/gpt.json#/ChatCompletionConfig` };
      }
      return chat;
    },
    completions: () => none,
    embeddings: () => none,
  };
}
