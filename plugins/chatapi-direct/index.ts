/**
 * The direct chat adapter: the request body goes to the service in the service's own format,
 * byte for byte, as the predict data (no split, no config). The adapter authenticates, applies the
 * rate limit and access rules, checks the rules of the service's wire family, and records the token
 * usage of the answer. `model` is `<author>/<service>[/model]` and reaches the service as sent.
 *
 * Wire families (`services[].family`):
 * - `openai`: the general chat-model proxy. Data type `{specs_url}/gpt.json#/ChatCompletionDirectProxy`;
 *   each partial answer is one chunk, written as a `data:` event, then `data: [DONE]`.
 * - `anthropic`: Messages API. Data type `{specs_url}/common.json#/JsonObject`; `max_tokens` is
 *   mandatory and `content` reaches the service as an array of typed parts (a string becomes one text block); each partial answer is one stream event
 *   (see _shared/anthropic/events.ts), written as `event: <type>` + `data:`; its v1/messages routes are
 *   in messages.ts.
 * - `other`: data type `JsonObject`; streamed like `openai`.
 */
import { definePlugin, type PluginContext, type ServiceEntry } from '../../core/plugins/index.js';
import { mergeChunks, wholeAnswerAsEvents, type AnswerDefaults } from '../_shared/openai/answers.js';
import { chatRequest } from '../_shared/openai/admission.js';
import { OPENAI_DONE, openAiErrorEvent, openAiEvent } from '../_shared/openai/events.js';
import { markServedBy } from '../_shared/openai/served-by.js';
import { affinityKey, sessionKey } from '../_shared/openai/affinity.js';
import { collectAnswer, relaySse, type SseFormat } from '../_shared/openai/relay.js';
import { findUsage, tokenCounts, type Usage } from '../_shared/openai/usage.js';
import { compileBodyCheck } from '../_shared/openai/validate.js';
import { openChatCall } from '../_shared/openai/open-call.js';
import { mountCors } from '../_shared/http/cors.js';
import { CHAT_ADAPTER_OPTIONS_SCHEMA, type ChatAdapterOptions } from '../_shared/openai/options.js';
import { ANTHROPIC_SSE, type AnthropicStreamState } from '../_shared/anthropic/events.js';
import { nativeMessagesBody } from '../_shared/anthropic/native-body.js';
import { DIRECT_BODY, checkAnthropicBody, type DirectBody } from './schemas.js';
import { mountDirectMessages } from './messages.js';

export type ChatApiDirectOptions = ChatAdapterOptions;

const BASE = '/api/adapters/chatapi-direct';

const OPENAI_SSE: SseFormat<AnswerDefaults> = {
  partial: openAiEvent,
  whole: wholeAnswerAsEvents,
  error: openAiErrorEvent,
  end: OPENAI_DONE,
};

const checkBody = compileBodyCheck<DirectBody>(DIRECT_BODY);

export default definePlugin<ChatApiDirectOptions>({
  name: 'chatapi-direct',
  description: "Direct chat adapter: chat/completions and v1/messages in the service's own format (OpenAI or Anthropic)",
  configSchema: CHAT_ADAPTER_OPTIONS_SCHEMA,
  routes(router, ctx) {
    mountCors(router, BASE, ctx.options.cors);
    const dataTypeOf = dataTypes(ctx);
    mountDirectMessages(router, ctx, BASE, dataTypeOf, (text) => ctx.http.parseJson(text));

    // The raw text is what the service gets; the parsed body is read for routing and checks only.
    router.post(
      `${BASE}{/v1}/chat/completions`,
      ctx.admission.request(chatRequest(ctx, checkBody), async (koa, { caller, raw: { text }, body, target: { id, service } }) => {
        if (service.family === 'anthropic') checkAnthropicBody(body);

        const stream = body.stream === true;
        const json = service.family === 'anthropic' ? nativeMessagesBody(body, text) : text;
        const call = await openChatCall(
          ctx,
          koa,
          caller,
          service,
          { predict: { data: { json, dataType: dataTypeOf(service) } } },
          stream,
          undefined,
          {
            model: id.model ?? service.defaultModel,
            affinityKey: affinityKey(service, body.messages, sessionKey(koa, body)),
          },
        );
        const defaults: AnswerDefaults = {
          id: `chatcmpl-${String(koa.state.requestId)}`,
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          object: 'chat.completion',
          includeUsage: body.stream_options?.include_usage === true,
        };
        let usage: Usage | undefined;
        if (stream) {
          usage =
            service.family === 'anthropic'
              ? await relaySse<AnthropicStreamState>(koa, call, ANTHROPIC_SSE, { stopped: false }, service.name)
              : await relaySse(koa, call, OPENAI_SSE, defaults, service.name);
        } else {
          const answer = await collectAnswer(call, service.name);
          const json = answer.whole ?? (service.family === 'anthropic' ? answer.parts.at(-1)! : mergeChunks(answer.parts, defaults));
          usage = findUsage(json);
          koa.type = 'application/json';
          koa.body = markServedBy(koa, call, json);
        }
        if (usage) ctx.http.reportTokens(koa, tokenCounts(usage), body.model);
        if (usage && ctx.options.logUsage) {
          ctx.logger.info(
            { requestId: koa.state.requestId, account: caller.account.name, key: caller.keyName, model: body.model, usage },
            'usage',
          );
        }
      }),
    );
  },
});

/**
 * The predict data type per service family, as a reference into the published specs: the general
 * chat-model proxy (`openai`) gets `gpt.json#/ChatCompletionDirectProxy`, every other service
 * `common.json#/JsonObject`. Rebuilt only when `specsUrl` changes (once, when the port is known).
 */
function dataTypes(ctx: PluginContext<any>): (service: ServiceEntry) => string {
  let url = '';
  let proxy = '';
  let object = '';
  return (service) => {
    if (url !== ctx.specsUrl) {
      url = ctx.specsUrl;
      proxy = `${url}/gpt.json#/ChatCompletionDirectProxy`;
      object = `${url}/common.json#/JsonObject`;
    }
    return service.family === 'openai' ? proxy : object;
  };
}
