/**
 * `count_tokens` asked of the service itself, as the ext call `count_tokens` with the request as the
 * `request` param (the Messages body for `family: anthropic`, the chat request otherwise); its answer
 * is `{"input_tokens": N}`. An upstream engine counts with its own tokenizer (Anthropic's
 * count_tokens, or `/tokenize` of vLLM, SGLang and llama.cpp). A service that cannot count gets an
 * estimate, said so in the `x-gateway-token-count: estimate` header (`service` when it counted):
 * agents call count_tokens routinely and stop on an error.
 */
import type { Context } from 'koa';
import {
  GatewayError,
  gatewayError,
  toGatewayError,
  type Caller,
  type PluginContext,
  type ServiceEntry,
} from '../../../core/plugins/index.js';
import { parseJsonObject } from '../openai/json-object.js';
import { openChatCall } from '../openai/open-call.js';
import { asOutage } from '../openai/outage.js';

export const COUNT_TOKENS_METHOD = 'count_tokens';

/** Says whether a count is the service's or the gateway's estimate. */
export const TOKEN_COUNT_HEADER = 'x-gateway-token-count';

/** Codes with which the service SDKs say a method is not there. */
const UNSUPPORTED = /method-not-supported|not[-_ ]?implemented|unknown[-_ ]method/i;

/**
 * The estimate: one token per 4 characters of the request's JSON, rounded up (the usual rule of
 * thumb for English text and code with BPE tokenizers; JSON punctuation makes it err high).
 */
export const estimateTokens = (requestJson: string): number => Math.ceil(requestJson.length / 4);

export async function countTokens(
  ctx: PluginContext<any>,
  koa: Context,
  caller: Caller,
  service: ServiceEntry,
  requestJson: string,
  extraHeaders: Record<string, string>,
): Promise<{ input_tokens: number }> {
  const call = await openChatCall(
    ctx,
    koa,
    caller,
    service,
    { ext: { methodName: COUNT_TOKENS_METHOD, params: { request: { json: requestJson } } } },
    false,
    extraHeaders,
  );
  let json: string | undefined;
  try {
    for await (const answer of call) if (answer.body === 'ext') json = answer.ext?.data?.json;
  } catch (thrown) {
    const err = toGatewayError(thrown);
    if (err instanceof GatewayError && (UNSUPPORTED.test(err.code) || err.status === 501)) {
      koa.set(TOKEN_COUNT_HEADER, 'estimate');
      return { input_tokens: estimateTokens(requestJson) };
    }
    throw asOutage(err, service.name);
  }
  const count = json === undefined ? undefined : parseJsonObject(json)?.input_tokens;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
    throw gatewayError('SERVICE_BAD_RESPONSE', {
      args: { service: service.name, reason: 'count_tokens must answer {"input_tokens": <integer>}' },
    });
  }
  koa.set(TOKEN_COUNT_HEADER, 'service');
  return { input_tokens: count };
}
