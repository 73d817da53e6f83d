/**
 * The body of `POST v1/messages` and `v1/messages/count_tokens` on the standard adapter
 * (responses-and-messages.md B.1, B.5). `content` may be a string (what SDK users write) or typed
 * blocks; `max_tokens` is required by `create` as in Anthropic's API, not by count_tokens.
 */
export interface MessagesBody extends Record<string, unknown> {
  model: string;
  messages: { role: string; content: string | Record<string, unknown>[] }[];
  system?: string | Record<string, unknown>[];
  max_tokens?: number;
  stream?: boolean | null;
  tools?: Record<string, unknown>[];
  tool_choice?: Record<string, unknown>;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id?: string | null };
  output_config?: { format?: { type?: string; schema?: unknown } };
}

const block = { type: 'object', required: ['type'], properties: { type: { type: 'string' } } };

const common = {
  model: { type: 'string', minLength: 1 },
  system: { anyOf: [{ type: 'string' }, { type: 'array', items: block }] },
  messages: {
    type: 'array',
    minItems: 1,
    items: {
      type: 'object',
      required: ['role', 'content'],
      properties: {
        // system and developer: the mid-conversation instructions Claude Code and the newest SDKs send.
        role: { enum: ['user', 'assistant', 'system', 'developer'] },
        content: { anyOf: [{ type: 'string' }, { type: 'array', items: block }] },
      },
    },
  },
  tools: {
    type: 'array',
    items: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 }, input_schema: { type: 'object' } } },
  },
  tool_choice: { type: 'object', required: ['type'], properties: { type: { enum: ['auto', 'any', 'none', 'tool'] } } },
};

export const MESSAGES_BODY = {
  type: 'object',
  required: ['model', 'max_tokens', 'messages'],
  properties: {
    ...common,
    max_tokens: { type: 'integer', minimum: 1 },
    stream: { type: ['boolean', 'null'] },
    stop_sequences: { type: 'array', items: { type: 'string' } },
    temperature: { type: 'number' },
    top_p: { type: 'number' },
    top_k: { type: 'integer', minimum: 0 },
    metadata: { type: 'object', properties: { user_id: { type: ['string', 'null'] } } },
  },
};

export const COUNT_TOKENS_BODY = {
  type: 'object',
  required: ['model', 'messages'],
  properties: common,
};
