import type { ServiceConfig } from '../config/types.js';

/** Prices of one model: per million input and output tokens. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
}

/** A service's prices (`services[].prices`): its default, per model it serves, in one currency. */
export interface Prices extends ModelPrice {
  readonly currency: string;
  /** Model names as callers send them (`<account>/<service>/<model>`'s last part, or the service's default model). */
  readonly models?: Readonly<Record<string, ModelPrice>>;
}

const PRICE = { type: 'number', minimum: 0, maximum: 1e9 } as const;

/** JSON Schema of `prices` (config file and API bodies alike). */
export const PRICES_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['input', 'output', 'currency'],
  properties: {
    input: { ...PRICE, description: 'Price of one million input tokens.' },
    output: { ...PRICE, description: 'Price of one million output tokens.' },
    currency: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,16}$', description: 'Currency code (USD, EUR, credits...).' },
    models: {
      type: 'object',
      maxProperties: 1000,
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['input', 'output'],
        properties: { input: PRICE, output: PRICE },
      },
      description: 'Prices of the models the service serves, where they differ from its own.',
    },
  },
} as const;

/** Prices of registry models by model name (`registry.models[].prices`), in their own currencies. */
export type RegistryPrices = ReadonlyMap<string, ModelPrice & { readonly currency: string }>;

/**
 * The model a chat adapter's `model` value names for pricing: what follows `<author>/<service>/`;
 * undefined for `<author>/<service>` or an alias (the service's default model applies).
 */
export function modelOfRequest(model: string | undefined): string | undefined {
  if (model === undefined) return undefined;
  const first = model.indexOf('/');
  const second = first < 0 ? -1 : model.indexOf('/', first + 1);
  return second < 0 ? undefined : model.slice(second + 1) || undefined;
}

/** What an answer cost, in the currency of the price that applied; undefined when no price applies. */
export interface Cost {
  amount: number;
  currency: string;
}

/**
 * The cost of an answer's tokens: the service's price for the model (`prices.models[model]`), else the
 * registry model's price, else the service's own price. Prices are per million tokens.
 */
export function costOf(
  service: Pick<ServiceConfig, 'prices' | 'defaultModel'>,
  model: string | undefined,
  tokens: { inputTokens: number; outputTokens: number },
  registry?: RegistryPrices,
): Cost | undefined {
  const name = model ?? service.defaultModel;
  const own = service.prices;
  const price = (name !== undefined ? (own?.models?.[name] ?? registry?.get(name)) : undefined) ?? own;
  if (!price) return undefined;
  const currency = 'currency' in price && typeof price.currency === 'string' ? price.currency : own!.currency;
  return { amount: (tokens.inputTokens * price.input + tokens.outputTokens * price.output) / 1_000_000, currency };
}
