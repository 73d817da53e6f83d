/**
 * The body of `POST responses` (responses-and-messages.md A.1), checked before anything is dispatched.
 * Only what the adapter reads is constrained; hosted tools, `reasoning`, `include` and the like are
 * refused where they are read (request.ts) or ignored when they change nothing for a chat service.
 */
export interface ResponsesBody extends Record<string, unknown> {
  model: string;
  input?: string | unknown[];
  instructions?: string | null;
  stream?: boolean | null;
  store?: boolean | null;
  previous_response_id?: string | null;
  tools?: unknown[];
  tool_choice?: unknown;
  text?: { format?: Record<string, unknown> } | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  parallel_tool_calls?: boolean | null;
  metadata?: Record<string, string> | null;
  user?: string | null;
  include?: string[] | null;
}

export const RESPONSES_BODY = {
  type: 'object',
  required: ['model'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      anyOf: [{ type: 'string' }, { type: 'array', maxItems: 10_000, items: { type: 'object' } }],
    },
    instructions: { type: ['string', 'null'] },
    stream: { type: ['boolean', 'null'] },
    store: { type: ['boolean', 'null'] },
    previous_response_id: { type: ['string', 'null'], maxLength: 200 },
    tools: {
      type: 'array',
      items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
    },
    text: {
      type: ['object', 'null'],
      properties: {
        format: {
          type: 'object',
          required: ['type'],
          properties: { type: { enum: ['text', 'json_object', 'json_schema'] } },
        },
      },
    },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1 },
    temperature: { type: ['number', 'null'] },
    top_p: { type: ['number', 'null'] },
    parallel_tool_calls: { type: ['boolean', 'null'] },
    metadata: { type: ['object', 'null'], maxProperties: 16, additionalProperties: { type: 'string', maxLength: 512 } },
    user: { type: ['string', 'null'] },
    include: { type: ['array', 'null'], maxItems: 32, items: { type: 'string' } },
  },
};
