import type { ErrorObject } from 'ajv';
import { gatewayError } from '../errors.js';
import { compileSchema, formatAjvErrors } from './ajv.js';

/**
 * How a failed check names the field: `field`, the top-level field (`config`) with the platform API's
 * reason text; `path`, the full path in OpenAI's notation (`messages[0].content`), as the chat
 * adapters report it.
 */
export type FieldNaming = 'field' | 'path';

/**
 * Compiles a request-body (or query) JSON Schema at boot into a check that returns the value typed
 * as `T`, or throws 400 VALIDATION_FAILED whose `param` is the offending field and whose message says
 * what is wrong with it. Call it in a plugin's `routes()`, never in a handler.
 *
 * @example
 * const readBody = compileRequestSchema<{ data: object }>(schema);
 * router.post('/x', async (ctx) => { const body = readBody(await ctx.http.readJson(ctx)); … });
 */
export function compileRequestSchema<T>(
  schema: Record<string, unknown>,
  context: 'body' | 'query' = 'body',
  naming: FieldNaming = 'field',
): (value: unknown) => T {
  const validate = compileSchema('requests', schema);
  return (value) => {
    if (validate(value)) return value as T;
    const error = validate.errors![0]!;
    if (naming === 'path') {
      const param = pathOf(error);
      throw gatewayError('VALIDATION_FAILED', { param, args: { reason: `${param ?? `the ${context}`} ${error.message ?? 'is invalid'}` } });
    }
    const param = fieldOf(error);
    throw gatewayError('VALIDATION_FAILED', {
      param: param ?? context,
      args: { reason: `${context}${formatAjvErrors([error])[0]!.replace(/^\/: /, ': ')}` },
    });
  };
}

/** The full path of the field an error is about, in OpenAI's notation; null for the whole value. */
function pathOf(error: ErrorObject): string | null {
  let path = '';
  for (const part of error.instancePath.split('/').slice(1)) {
    path += /^\d+$/.test(part) ? `[${part}]` : `${path ? '.' : ''}${part.replace(/~1/g, '/').replace(/~0/g, '~')}`;
  }
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    path += `${path ? '.' : ''}${missing}`;
  }
  return path || null;
}

/** The top-level field an error is about. */
function fieldOf(error: ErrorObject): string | undefined {
  const head = error.instancePath.split('/')[1];
  if (head) return head.replace(/~1/g, '/').replace(/~0/g, '~');
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  return params.missingProperty ?? params.additionalProperty;
}
