import type { ErrorObject } from 'ajv';
import { gatewayError } from '../errors.js';
import { createAjv, formatAjvErrors } from './ajv.js';

// One instance for every plugin's request schemas; a schema with an $id is compiled once per process.
const ajv = createAjv({ allErrors: false, useDefaults: true });

/**
 * Compiles a request-body (or query) JSON Schema at boot into a check that returns the value typed
 * as `T`, or throws 400 VALIDATION_FAILED whose `param` is the offending field and whose message says
 * what is wrong with it. Call it in a plugin's `routes()`, never in a handler.
 *
 * @example
 * const readBody = compileRequestSchema<{ data: object }>(schema);
 * router.post('/x', async (ctx) => { const body = readBody(await ctx.http.readJson(ctx)); … });
 */
export function compileRequestSchema<T>(schema: Record<string, unknown>, context: 'body' | 'query' = 'body'): (value: unknown) => T {
  const id = typeof schema.$id === 'string' ? schema.$id : undefined;
  const validate = (id ? ajv.getSchema(id) : undefined) ?? ajv.compile(schema);
  return (value) => {
    if (validate(value)) return value as T;
    const error = validate.errors![0]!;
    const param = fieldOf(error);
    throw gatewayError('VALIDATION_FAILED', {
      param: param ?? context,
      args: { reason: `${context}${formatAjvErrors([error])[0]!.replace(/^\/: /, ': ')}` },
    });
  };
}

/** The top-level field an error is about. */
function fieldOf(error: ErrorObject): string | undefined {
  const head = error.instancePath.split('/')[1];
  if (head) return head.replace(/~1/g, '/').replace(/~0/g, '~');
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  return params.missingProperty ?? params.additionalProperty;
}
