/**
 * The Messages API on the direct adapter: `POST <base>/v1/messages` and `…/count_tokens` pass the body
 * byte for byte to a `family: anthropic` service, under the direct adapter's spec rules for that
 * family (`max_tokens` required, `content` as typed parts: a string is sent on as one text block).
 * Keys in `x-api-key` or `Authorization`; errors in Anthropic's shape with a `request-id` header.
 */
import type Router from '@koa/router';
import { gatewayError, type PluginContext, type ServiceEntry } from '../../core/plugins/index.js';
import { countTokens } from '../_shared/anthropic/count-tokens.js';
import { relayNativeMessages } from '../_shared/anthropic/native-answer.js';
import { nativeMessagesBody } from '../_shared/anthropic/native-body.js';
import { anthropicRoute, passedHeaders } from '../_shared/anthropic/route.js';
import { affinityKey, sessionKey } from '../_shared/openai/affinity.js';
import { chatRequest } from '../_shared/openai/admission.js';
import type { ChatTarget } from '../_shared/openai/model-id.js';
import { openChatCall } from '../_shared/openai/open-call.js';
import type { ChatAdapterOptions } from '../_shared/openai/options.js';
import { tokenCounts } from '../_shared/openai/usage.js';
import { compileBodyCheck } from '../_shared/openai/validate.js';
import { DIRECT_BODY, checkAnthropicBody, type DirectBody } from './schemas.js';

const checkBody = compileBodyCheck<DirectBody>(DIRECT_BODY);

export function mountDirectMessages(
  router: Router,
  ctx: PluginContext<ChatAdapterOptions>,
  base: string,
  dataTypeOf: (service: ServiceEntry) => string,
  parseJson: (text: string) => unknown,
): void {
  /** The admission of both routes: the raw body, read as sent and parsed with the gateway's rules. */
  const steps = chatRequest(ctx, checkBody, async (koa) => {
    const text = (await ctx.http.readRawBody(koa)).toString('utf8');
    return { text, value: parseJson(text) };
  });
  /** Only an Anthropic-family service speaks the Messages API on this adapter. */
  const messagesService = (body: DirectBody, { service }: ChatTarget): ServiceEntry => {
    if (service.family !== 'anthropic') {
      throw gatewayError('VALIDATION_FAILED', {
        param: 'model',
        args: {
          reason: `'${body.model}' does not speak the Messages API here (not an Anthropic-family service): use chat/completions, or the standard adapter's v1/messages`,
        },
      });
    }
    return service;
  };

  router.post(
    `${base}/v1/messages`,
    anthropicRoute,
    ctx.admission.request(steps, async (koa, { caller, raw: { text }, body, target }) => {
      const passed = passedHeaders(koa);
      const service = messagesService(body, target);
      checkAnthropicBody(body);
      const stream = body.stream === true;
      const call = await openChatCall(
        ctx,
        koa,
        caller,
        service,
        { predict: { data: { json: nativeMessagesBody(body, text), dataType: dataTypeOf(service) } } },
        stream,
        passed,
        {
          affinityKey: affinityKey(service, body.messages, sessionKey(koa, body)),
        },
      );
      const usage = await relayNativeMessages(koa, call, stream, service.name);
      if (usage) ctx.http.reportTokens(koa, tokenCounts(usage), body.model);
      if (usage && ctx.options.logUsage) {
        ctx.logger.info(
          {
            requestId: koa.state.requestId,
            account: caller.account.name,
            key: caller.keyName,
            model: body.model,
            endpoint: 'messages',
            usage,
          },
          'usage',
        );
      }
    }),
  );

  router.post(
    `${base}/v1/messages/count_tokens`,
    anthropicRoute,
    ctx.admission.request(steps, async (koa, { caller, raw: { text }, body, target }) => {
      const passed = passedHeaders(koa);
      const service = messagesService(body, target);
      checkAnthropicBody(body, { maxTokensRequired: false });
      koa.body = await countTokens(ctx, koa, caller, service, nativeMessagesBody(body, text), passed);
    }),
  );
}
