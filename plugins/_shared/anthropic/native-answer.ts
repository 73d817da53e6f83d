/**
 * The answer of a `family: anthropic` service to a native Messages body, passed to the caller as
 * the service sent it: its SSE events when streamed, else its `message` JSON. Both chat adapters
 * serve native Messages bodies this way.
 */
import type { Context } from 'koa';
import type { ServiceCall } from '../../../core/plugins/index.js';
import { collectAnswer, relaySse } from '../openai/relay.js';
import { findUsage, type Usage } from '../openai/usage.js';
import { ANTHROPIC_SSE, type AnthropicStreamState } from './events.js';

export async function relayNativeMessages(
  koa: Context,
  call: ServiceCall,
  stream: boolean,
  serviceName: string,
): Promise<Usage | undefined> {
  if (stream) return relaySse<AnthropicStreamState>(koa, call, ANTHROPIC_SSE, { stopped: false }, serviceName);
  const answer = await collectAnswer(call, serviceName);
  const json = answer.whole ?? answer.parts.at(-1)!;
  koa.type = 'application/json';
  koa.body = json;
  return findUsage(json);
}
