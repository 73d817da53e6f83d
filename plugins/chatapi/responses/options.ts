/**
 * `plugins.options.chatapi.responses`: how the Responses API keeps stored responses. Each bound is
 * per account, so one account's responses never push out another's, and their bytes count against
 * `limits.storageBytesPerAccount` like async results and datasets.
 */
import { DEFAULT_MAX_RESPONSES_PER_ACCOUNT } from './store.js';

export interface ResponsesOptions {
  /**
   * Keep responses that ask for it (`store` is true unless the request says false). With false none is
   * kept (the answer says `store: false`): the setting for several workers on the memory store.
   */
  store: boolean;
  /** Days a stored response is kept (30, as OpenAI keeps them). */
  retentionDays: number;
  /** Stored responses one account keeps; past it the account's own oldest goes. */
  maxPerAccount: number;
  /**
   * Largest conversation a `previous_response_id` turn sends (the stored conversation and this turn's
   * input, as JSON bytes): every turn re-sends the whole chain, so without a bound a long chain costs
   * its square. Past it: 400 RESPONSE_CHAIN_TOO_LONG.
   */
  maxConversationBytes: number;
}

export const DEFAULT_RESPONSES_OPTIONS: ResponsesOptions = {
  store: true,
  retentionDays: 30,
  maxPerAccount: DEFAULT_MAX_RESPONSES_PER_ACCOUNT,
  maxConversationBytes: 8 * 1024 * 1024,
};

export const RESPONSES_OPTIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    store: { type: 'boolean', default: DEFAULT_RESPONSES_OPTIONS.store },
    retentionDays: { type: 'number', exclusiveMinimum: 0, default: DEFAULT_RESPONSES_OPTIONS.retentionDays },
    maxPerAccount: { type: 'integer', minimum: 1, default: DEFAULT_RESPONSES_OPTIONS.maxPerAccount },
    maxConversationBytes: { type: 'integer', minimum: 1024, default: DEFAULT_RESPONSES_OPTIONS.maxConversationBytes },
  },
};
