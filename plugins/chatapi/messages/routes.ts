/**
 * The Anthropic Messages API on the standard adapter (docs/design.md, decisions): `POST v1/messages` and
 * `v1/messages/count_tokens` in front of any chat service, translated to the chat predict of
 * `chat/completions` (same split, same registry validation) and back; services of `family: anthropic`
 * get the Messages body itself, with string `content` turned into text blocks (what their spec
 * requires). Keys in `x-api-key` or `Authorization`; errors in Anthropic's shape.
 */
import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Caller, PluginContext } from '../../../core/plugins/index.js';
import { countTokens } from '../../_shared/anthropic/count-tokens.js';
import { affinityKey, sessionKey } from '../../_shared/openai/affinity.js';
import { relayNativeMessages } from '../../_shared/anthropic/native-answer.js';
import { nativeMessagesBody } from '../../_shared/anthropic/native-body.js';
import { anthropicRoute, passedHeaders } from '../../_shared/anthropic/route.js';
import { chatRequest } from '../../_shared/openai/admission.js';
import { openChatCall } from '../../_shared/openai/open-call.js';
import type { ChatAdapterOptions } from '../../_shared/openai/options.js';
import { collectChatCompletion, relaySse } from '../../_shared/openai/relay.js';
import { findUsage, type Usage } from '../../_shared/openai/usage.js';
import { compileBodyCheck } from '../../_shared/openai/validate.js';
import { predictOf, splitRequest } from '../transform.js';
import type { ReasoningSeal } from '../../_shared/openai/reasoning-seal.js';
import { validateTranslatedConfig } from '../validate-config.js';
import { messageFromChat } from './answer.js';
import { CHAT_TO_MESSAGES_PARAM, toChatRequest, type ThinkingCheck } from './request.js';
import { COUNT_TOKENS_BODY, MESSAGES_BODY, type MessagesBody } from './schema.js';
import { MESSAGES_SSE, MessagesStream } from './stream.js';
import { takenOrDropped } from '../reasoning-effort.js';

export interface MessagesDeps {
  ctx: PluginContext<ChatAdapterOptions>;
  /** The route patterns of a path: under `<base>/v1/…` (where the Anthropic SDKs call) and the alias prefix. */
  route: (path: string) => string[];
  chatTypes: () => { data?: string; config?: string };
  logUsage: (koa: Context, caller: Caller, model: string, usage: Usage | undefined, endpoint: string) => void;
  /** Signs the engine's reasoning as thinking blocks, and verifies those that come back. */
  seal: ReasoningSeal;
}

const checkCreate = compileBodyCheck<MessagesBody>(MESSAGES_BODY);
const checkCount = compileBodyCheck<MessagesBody>(COUNT_TOKENS_BODY);

export function mountMessages(router: Router, deps: MessagesDeps): void {
  const { ctx, route } = deps;

  router.post(
    route('messages'),
    anthropicRoute,
    ctx.admission.request(chatRequest(ctx, checkCreate), async (koa, { caller, raw: { text }, body, target: { id, service } }) => {
      const passed = passedHeaders(koa);
      const stream = body.stream === true;
      const routing = { affinityKey: affinityKey(service, body.messages, sessionKey(koa, body)) };
      let usage: Usage | undefined;

      if (service.family === 'anthropic') {
        const call = await openChatCall(
          ctx,
          koa,
          caller,
          service,
          { predict: { data: { json: nativeMessagesBody(body, text), dataType: `${ctx.specsUrl}/common.json#/JsonObject` } } },
          stream,
          passed,
          routing,
        );
        usage = await relayNativeMessages(koa, call, stream, service.name);
        deps.logUsage(koa, caller, body.model, usage, 'messages');
        return;
      }

      const chat = toChatRequest(body, thinkingCheck(deps.seal));
      takenOrDropped(ctx, service, id.model, chat);
      const split = splitRequest(chat, 'chat', id.model ?? service.defaultModel);
      validateTranslatedConfig(ctx, service, split.configObject, id.model, CHAT_TO_MESSAGES_PARAM);
      const call = await openChatCall(ctx, koa, caller, service, predictOf(split, deps.chatTypes()), stream, passed, routing);
      const messageId = `msg_${randomBytes(12).toString('hex')}`;
      if (stream) {
        usage = await relaySse(koa, call, MESSAGES_SSE, new MessagesStream(messageId, body.model, deps.seal), service.name);
      } else {
        const { json, completion } = await collectChatCompletion(call, service.name, {
          id: messageId,
          created: Math.floor(Date.now() / 1000),
          model: body.model,
        });
        koa.body = messageFromChat(completion, messageId, body.model, deps.seal);
        usage = findUsage(json);
      }
      deps.logUsage(koa, caller, body.model, usage, 'messages');
    }),
  );

  router.post(
    route('messages/count_tokens'),
    anthropicRoute,
    ctx.admission.request(chatRequest(ctx, checkCount), async (koa, { caller, raw: { text }, body, target: { id, service } }) => {
      const passed = passedHeaders(koa);
      let request: string;
      if (service.family === 'anthropic') {
        request = nativeMessagesBody(body, text);
      } else {
        const chat = toChatRequest(body, thinkingCheck(deps.seal));
        const model = id.model ?? service.defaultModel;
        request = JSON.stringify({
          ...(model !== undefined ? { model } : {}),
          messages: chat.messages,
          ...(chat.tools ? { tools: chat.tools } : {}),
        });
      }
      koa.body = await countTokens(ctx, koa, caller, service, request, passed);
    }),
  );
}

/** A thinking block goes back to the engine when its signature is this gateway's. */
const thinkingCheck =
  (seal: ReasoningSeal): ThinkingCheck =>
  (block) =>
    typeof block.thinking === 'string' && seal.verify(block.thinking, block.signature);
