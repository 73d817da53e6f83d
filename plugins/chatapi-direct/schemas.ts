import { gatewayError } from '../../core/plugins/index.js';

/**
 * Request bodies of the direct adapter. The body is the service's own format and reaches it unchanged;
 * the adapter checks only what it must read (the model id and the stream flag) and the rules of the
 * Anthropic family, which refuses what the Messages API would refuse, before any dispatch.
 */

export interface DirectBody extends Record<string, unknown> {
  model: string;
  messages: unknown[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
}

export const DIRECT_BODY = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: ['object', 'null'] },
    messages: { type: 'array' },
  },
};

/**
 * The Anthropic family's rules: `max_tokens` is mandatory (not for count_tokens, which takes none);
 * `content` is a string (sent on as one text block, see nativeMessagesBody) or an array of typed parts.
 */
export function checkAnthropicBody(body: DirectBody, options: { maxTokensRequired?: boolean } = {}): void {
  const maxTokens = body.max_tokens;
  const skip = options.maxTokensRequired === false && maxTokens === undefined;
  if (!skip && (maxTokens === undefined || maxTokens === null)) {
    throw gatewayError('VALIDATION_FAILED', {
      param: 'max_tokens',
      args: { reason: 'max_tokens is required for Anthropic-family services' },
    });
  }
  if (!skip && (!Number.isInteger(maxTokens) || (maxTokens as number) < 1)) {
    throw gatewayError('VALIDATION_FAILED', { param: 'max_tokens', args: { reason: 'max_tokens must be a positive integer' } });
  }
  const messages = body.messages as unknown[];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    const content = typeof message === 'object' && message !== null ? (message as Record<string, unknown>).content : undefined;
    if (typeof content === 'string') continue;
    if (
      Array.isArray(content) &&
      content.every((part) => typeof part === 'object' && part !== null && typeof (part as Record<string, unknown>).type === 'string')
    )
      continue;
    const param = `messages[${i}].content`;
    throw gatewayError('VALIDATION_FAILED', {
      param,
      args: { reason: `${param} must be a string or an array of typed parts, each with a string type` },
    });
  }
}
