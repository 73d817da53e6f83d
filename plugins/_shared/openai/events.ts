import { renderErrorBody, type GatewayError } from '../../../core/plugins/index.js';

/**
 * OpenAI's stream framing (openai-wire.md section 1): data-only events, each one line of JSON followed
 * by a blank line, `data: [DONE]` at the end; no `event:`, `id:` or `retry:` fields, which break the
 * SDK parsers.
 */
export const openAiEvent = (json: string): string => `data: ${json}\n\n`;

/** A mid-stream error: `data: {"error": …}` in the one error envelope; the SDKs raise APIError on it. */
export const openAiErrorEvent = (err: GatewayError): string => `data: ${JSON.stringify(renderErrorBody(err))}\n\n`;

export const OPENAI_DONE = 'data: [DONE]\n\n';
