import { Ajv, type ErrorObject } from 'ajv';
import { gatewayError } from '../../../core/plugins/index.js';

// One instance for the request schemas of both adapters; schemas are compiled when a plugin declares
// its routes, never on the request path. allErrors is off: the first problem is the one reported.
const ajv = new Ajv({ allErrors: false, strict: false });

export type BodyCheck<T> = (body: unknown) => T;

/**
 * Compiles a JSON Schema of a request body into a check that returns the body typed as T or throws
 * 400 VALIDATION_FAILED whose `param` names the field in OpenAI's notation (`messages[0].content`).
 */
export function compileBodyCheck<T>(schema: Record<string, unknown>): BodyCheck<T> {
  const validate = ajv.compile(schema);
  return (body) => {
    if (validate(body)) return body as T;
    const error = validate.errors?.[0];
    const param = error ? paramOf(error) : null;
    const reason = error ? `${param ?? 'the body'} ${error.message ?? 'is invalid'}` : 'the body is invalid';
    throw gatewayError('VALIDATION_FAILED', { param, args: { reason } });
  };
}

function paramOf(error: ErrorObject): string | null {
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
