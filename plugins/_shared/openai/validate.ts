import { compileRequestSchema } from '../../../core/plugins/index.js';

export type BodyCheck<T> = (body: unknown) => T;

/**
 * Compiles a JSON Schema of a request body into a check that returns the body typed as T or throws
 * 400 VALIDATION_FAILED whose `param` names the field in OpenAI's notation (`messages[0].content`).
 * Core's one request-schema instance compiles it, when a plugin declares its routes.
 */
export function compileBodyCheck<T>(schema: Record<string, unknown>): BodyCheck<T> {
  return compileRequestSchema<T>(schema, 'body', 'path');
}
