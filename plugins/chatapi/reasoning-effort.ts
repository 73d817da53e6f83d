/**
 * How hard the engine should think, from what a Responses or Messages caller asked, as Chat's
 * `reasoning_effort` (vLLM, SGLang, llama.cpp with reasoning models, OpenAI's reasoning models):
 * Responses `reasoning.effort` as it is; Messages `output_config.effort` (`max` is Chat's `high`),
 * else the `budget_tokens` of `thinking: {type: "enabled"}` in three bands. Left out where the
 * service's registry model lists `reasoning_effort` without that value (`takenOrDropped`): a caller
 * who asked for thinking by another API's name never gets a 400 for a field they did not write.
 */
import { GatewayError, type PluginContext, type ServiceEntry } from '../../core/plugins/index.js';
import { isJsonObject as isObject } from '../_shared/openai/json-object.js';

export const REASONING_EFFORT = 'reasoning_effort';

/** Thinking budgets up to these many tokens are `low`, then `medium`; above, `high`. */
export const BUDGET_BANDS = { low: 4096, medium: 16384 } as const;

const RESPONSES_EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

/** Responses `reasoning.effort`, when it is one Chat knows. */
export function effortOfResponses(reasoning: unknown): string | undefined {
  const effort = isObject(reasoning) ? reasoning.effort : undefined;
  return typeof effort === 'string' && RESPONSES_EFFORTS.has(effort) ? effort : undefined;
}

/** Messages `output_config.effort`, else the band of `thinking.budget_tokens` (thinking enabled). */
export function effortOfMessages(outputConfig: unknown, thinking: unknown): string | undefined {
  const effort = isObject(outputConfig) ? outputConfig.effort : undefined;
  if (effort === 'low' || effort === 'medium' || effort === 'high') return effort;
  if (effort === 'max') return 'high';
  if (!isObject(thinking) || thinking.type !== 'enabled' || typeof thinking.budget_tokens !== 'number') return undefined;
  const budget = thinking.budget_tokens;
  return budget <= BUDGET_BANDS.low ? 'low' : budget <= BUDGET_BANDS.medium ? 'medium' : 'high';
}

/**
 * Leaves `reasoning_effort` in a translated chat request only where the service's config check (its
 * registry model's variables) takes its value; a model that does not list the field takes any.
 */
export function takenOrDropped(
  ctx: PluginContext<any>,
  service: ServiceEntry,
  model: string | undefined,
  chat: Record<string, unknown>,
): void {
  if (chat[REASONING_EFFORT] === undefined) return;
  try {
    ctx.pipeline.validateConfig(service, { [REASONING_EFFORT]: chat[REASONING_EFFORT] }, model);
  } catch (err) {
    if (err instanceof GatewayError && err.param === REASONING_EFFORT) delete chat[REASONING_EFFORT];
  }
}
