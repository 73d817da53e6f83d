/**
 * The Responses API on the standard adapter (docs/design.md, decisions): `POST responses` translated to the
 * chat predict the adapter makes for `chat/completions` (same split, same registry validation), the
 * answer translated back (a response object, or typed events), and the stored responses:
 * `GET`/`DELETE responses/{id}` and `GET responses/{id}/input_items`, readable only by the account
 * that created them. A service with `nativeResponses` gets the body unchanged instead.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { callerOf, gatewayError, type Caller, type PluginContext } from '../../../core/plugins/index.js';
import { affinityKey, sessionKey } from '../../_shared/openai/affinity.js';
import type { JsonObject as Json } from '../../_shared/openai/json-object.js';
import { CHAT_KEY, chatRequest } from '../../_shared/openai/admission.js';
import { openChatCall } from '../../_shared/openai/open-call.js';
import type { ChatAdapterOptions } from '../../_shared/openai/options.js';
import { collectAnswer, collectChatCompletion, relaySse } from '../../_shared/openai/relay.js';
import { findUsage, type Usage } from '../../_shared/openai/usage.js';
import { compileBodyCheck } from '../../_shared/openai/validate.js';
import { predictOf, splitRequest } from '../transform.js';
import type { ReasoningSeal } from '../../_shared/openai/reasoning-seal.js';
import { validateTranslatedConfig } from '../validate-config.js';
import { outputAsMessages, responseFromChat, type ResponseHead } from './answer.js';
import { newId } from './ids.js';
import { NATIVE_RESPONSES_SSE, type NativeStreamState } from './native.js';
import { CHAT_TO_RESPONSES_PARAM, toChatRequest } from './request.js';
import { RESPONSES_BODY, type ResponsesBody } from './schema.js';
import type { ResponsesOptions } from './options.js';
import { jsonBytes, type ResponseStore } from './store.js';
import { RESPONSES_SSE, ResponsesStream } from './stream.js';
import { takenOrDropped } from '../reasoning-effort.js';

export interface ResponsesDeps {
  ctx: PluginContext<ChatAdapterOptions>;
  /** The route pattern for a path under the adapter base (`<base>{/v1}/<path>`). */
  route: (path: string) => string[];
  store: () => Promise<ResponseStore>;
  /** `plugins.options.chatapi.responses` */
  options: ResponsesOptions;
  /** `dataType` of chat predict data and config. */
  chatTypes: () => { data?: string; config?: string };
  logUsage: (koa: Context, caller: Caller, model: string, usage: Usage | undefined) => void;
  /** Seals the engine's reasoning into `encrypted_content`, and opens what comes back. */
  seal: ReasoningSeal;
}

const checkBody = compileBodyCheck<ResponsesBody>(RESPONSES_BODY);

/** The hosted tools of a request left out for a chat service, comma-separated. */
export const DROPPED_TOOLS_HEADER = 'x-gateway-dropped-tools';

export function mountResponses(router: Router, deps: ResponsesDeps): void {
  const { ctx, route } = deps;

  router.post(
    route('responses'),
    ctx.admission.request(chatRequest(ctx, checkBody), async (koa, { caller, raw: { text }, body, target: { id, service } }) => {
      const stream = body.stream === true;
      if (service.nativeResponses) {
        const call = await openChatCall(
          ctx,
          koa,
          caller,
          service,
          { predict: { data: { json: text, dataType: `${ctx.specsUrl}/gpt.json#/ResponsesRequest` } } },
          stream,
          undefined,
          {
            affinityKey: affinityKey(service, body.input, sessionKey(koa, body)),
          },
        );
        if (stream) {
          const usage = await relaySse<NativeStreamState>(
            koa,
            call,
            NATIVE_RESPONSES_SSE,
            { terminated: false, sequence: 0 },
            service.name,
          );
          deps.logUsage(koa, caller, body.model, usage);
        } else {
          const answer = await collectAnswer(call, service.name);
          const json = answer.whole ?? answer.parts.at(-1)!;
          koa.type = 'application/json';
          koa.body = json;
          deps.logUsage(koa, caller, body.model, findUsage(json));
        }
        return;
      }

      const storing = deps.options.store && body.store !== false;
      const previous = body.previous_response_id
        ? await ownStored(deps, caller, body.previous_response_id, 'previous_response_id')
        : undefined;
      const { chat, conversation, inputItems, dropped, names } = toChatRequest(body, previous?.conversation, deps.seal);
      if (dropped.length) {
        // Hosted tools run at OpenAI; a chat engine has none. Said, not silently lost.
        koa.set(DROPPED_TOOLS_HEADER, dropped.join(', '));
        ctx.logger.info({ requestId: koa.state.requestId, model: body.model, dropped }, 'hosted tools dropped: the chat service runs none');
      }
      // The JSON of the conversation is what this turn sends and what storing it keeps: measured once.
      const conversationBytes = previous || storing ? jsonBytes(conversation) : 0;
      if (previous && conversationBytes > deps.options.maxConversationBytes) {
        throw gatewayError('RESPONSE_CHAIN_TOO_LONG', {
          param: 'previous_response_id',
          args: { id: previous.id, bytes: conversationBytes, limit: deps.options.maxConversationBytes },
        });
      }
      takenOrDropped(ctx, service, id.model, chat);
      const split = splitRequest(chat, 'chat', id.model ?? service.defaultModel);
      validateTranslatedConfig(ctx, service, split.configObject, id.model, CHAT_TO_RESPONSES_PARAM);
      // Refused before the service is called: the answer's bytes count against the next write, as async results do.
      if (storing) await ctx.pipeline.checkStorage(caller, conversationBytes + jsonBytes(inputItems));

      const call = await openChatCall(ctx, koa, caller, service, predictOf(split, deps.chatTypes()), stream, undefined, {
        affinityKey: affinityKey(service, chat.messages, sessionKey(koa, body)),
      });
      const head: ResponseHead = {
        id: newId('resp'),
        createdAt: Math.floor(Date.now() / 1000),
        model: body.model,
        body,
        names,
        seal: deps.seal,
        kept: deps.options.store,
      };
      let response: Json | undefined;
      let usage: Usage | undefined;
      if (stream) {
        const translator = new ResponsesStream(head);
        usage = await relaySse(koa, call, RESPONSES_SSE, translator, service.name);
        response = translator.final?.status === 'failed' ? undefined : translator.final;
      } else {
        const { json, completion } = await collectChatCompletion(call, service.name, {
          id: head.id,
          created: head.createdAt,
          model: body.model,
        });
        response = responseFromChat(head, completion);
        usage = findUsage(json);
        koa.body = response;
      }
      deps.logUsage(koa, caller, body.model, usage);
      if (response && storing) {
        const store = await deps.store();
        await store.put({
          id: head.id,
          ownerId: caller.account.id,
          createdAt: Date.now(),
          response,
          inputItems,
          conversation: [...conversation, ...outputAsMessages(response.output as Json[], names)],
        });
      }
    }),
  );

  const reader = ctx.admission.callerWith(CHAT_KEY, 'READ_DATA');
  router.get(route('responses/:id'), reader, async (koa) => {
    const caller = callerOf(koa);
    koa.body = (await ownStored(deps, caller, String(koa.params.id))).response;
  });

  router.delete(route('responses/:id'), ctx.admission.callerWith(CHAT_KEY, 'MODIFY_DATA'), async (koa) => {
    const caller = callerOf(koa);
    const id = String(koa.params.id);
    await ownStored(deps, caller, id);
    await (await deps.store()).delete(id);
    koa.body = { id, object: 'response', deleted: true };
  });

  router.get(route('responses/:id/input_items'), reader, async (koa) => {
    const caller = callerOf(koa);
    const stored = await ownStored(deps, caller, String(koa.params.id));
    koa.body = listPage(stored.inputItems, koa.query);
  });
}

/** A stored response of the caller; another account's is as missing as an unknown id (404). */
async function ownStored(deps: ResponsesDeps, caller: Caller, id: string, param = 'id') {
  const stored = await (await deps.store()).get(id);
  if (!stored || stored.ownerId !== caller.account.id)
    throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { param, args: { entity: 'response', id } });
  return stored;
}

/** One page of input items: `order` (default desc), `after` (an item id), `limit` (1–100, default 20). */
function listPage(items: readonly Json[], query: Record<string, unknown>): Json {
  const order = query.order === 'asc' ? 'asc' : 'desc';
  const limit = Math.min(100, Math.max(1, Number.parseInt(String(query.limit ?? '20'), 10) || 20));
  const ordered = order === 'asc' ? [...items] : [...items].reverse();
  const after = typeof query.after === 'string' ? ordered.findIndex((item) => item.id === query.after) : -1;
  const rest = ordered.slice(after + 1);
  const data = rest.slice(0, limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: rest.length > limit,
  };
}
