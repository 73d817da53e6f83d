/** `plugins.options.chatapi`: the options both adapters take, and this adapter's own. */
import { CHAT_ADAPTER_OPTIONS_SCHEMA, type ChatAdapterOptions } from '../_shared/openai/options.js';
import { DEFAULT_REASONING_SECRET_ENV } from '../_shared/openai/reasoning-seal.js';
import { RESPONSES_OPTIONS_SCHEMA, type ResponsesOptions } from './responses/options.js';

export interface ChatApiOptions extends ChatAdapterOptions {
  /** A second prefix every route of the adapter is also served under (`/v1`); none by default. */
  aliasPrefix?: string;
  /** The environment variable holding the secret that signs the engine's reasoning (thinking signatures, encrypted_content). */
  reasoningSecretEnv: string;
  /** How the Responses API keeps stored responses. */
  responses: ResponsesOptions;
}

export const CHATAPI_OPTIONS_SCHEMA = {
  ...CHAT_ADAPTER_OPTIONS_SCHEMA,
  properties: {
    ...CHAT_ADAPTER_OPTIONS_SCHEMA.properties,
    // Not under /api: that is the platform API's.
    aliasPrefix: { type: 'string', pattern: '^/(?!api(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$' },
    reasoningSecretEnv: { type: 'string', minLength: 1, default: DEFAULT_REASONING_SECRET_ENV },
    responses: RESPONSES_OPTIONS_SCHEMA,
  },
};
