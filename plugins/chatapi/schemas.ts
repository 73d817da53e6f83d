/**
 * Request bodies of the standard adapter, checked before anything is dispatched. Only what the
 * adapter relies on is constrained (the model id, the data fields, the stream flags); every other
 * field is the service's config and is checked against the registry model instead.
 */

export interface OpenAiBody extends Record<string, unknown> {
  model: string;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  encoding_format?: 'float' | 'base64';
}

const model = { type: 'string', minLength: 1 };
const stream = { type: ['boolean', 'null'] };
const streamOptions = { type: ['object', 'null'], properties: { include_usage: { type: ['boolean', 'null'] } } };

export const CHAT_BODY = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model,
    stream,
    stream_options: streamOptions,
    messages: {
      type: 'array',
      minItems: 1,
      items: { type: 'object', required: ['role'], properties: { role: { type: 'string' } } },
    },
  },
};

export const COMPLETIONS_BODY = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model,
    stream,
    stream_options: streamOptions,
    prompt: { type: ['string', 'array'] },
  },
};

export const EMBEDDINGS_BODY = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model,
    input: { type: ['string', 'array'] },
    encoding_format: { enum: ['float', 'base64'] },
  },
};
