import { Ajv, type ErrorObject, type Options } from 'ajv';
import * as ajvFormats from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its function arrives as `default` of the namespace.
const addFormats = ajvFormats.default as unknown as (ajv: Ajv) => Ajv;

/**
 * A configured Ajv instance. Schemas are compiled once at boot and the compiled functions are kept;
 * nothing is compiled on the request path.
 */
export function createAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

/** One readable line per problem: `/path/to/field: message`. */
export function formatAjvErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const where = e.instancePath || '/';
    const extra = e.keyword === 'additionalProperties' ? ` ('${(e.params as { additionalProperty: string }).additionalProperty}')`
      : e.keyword === 'enum' ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')})`
      : '';
    return `${where}: ${e.message ?? e.keyword}${extra}`;
  });
}
