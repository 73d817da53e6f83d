import { Ajv, type ErrorObject, type Options } from 'ajv';
import * as ajvFormats from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its function arrives as `default` of the namespace.
const addFormats = ajvFormats.default as unknown as (ajv: Ajv) => Ajv;

/**
 * The process's Ajv instances, all made here. Schemas are compiled once at boot and the compiled
 * functions are kept; nothing is compiled on the request path. There are three, not one, because
 * Ajv's options are per instance and the three jobs need different ones:
 *
 * - `settings`: the config file, registry files and plugin options, read at boot. Every problem is
 *   listed (a broken file is fixed in one pass) and defaults are filled in.
 * - `requests`: request bodies and queries of every plugin (`compileRequestSchema`). Strict, so a
 *   schema with a typo fails when its plugin mounts; stops at the first problem (the one a 400
 *   names); fills in defaults.
 * - `callerData`: callers' data and configs against schemas the operator wrote or the registry
 *   generated (registry parameters, published data types). Unknown keywords are allowed (they are
 *   the operator's), nothing is filled in (the service gets what the caller sent), first problem only.
 */
const INSTANCE_OPTIONS = {
  settings: { allErrors: true, useDefaults: true },
  requests: { allErrors: false, useDefaults: true, strict: true, strictRequired: false, allowUnionTypes: true },
  callerData: { allErrors: false, useDefaults: false, coerceTypes: false },
} satisfies Record<string, Options>;

export type AjvPurpose = keyof typeof INSTANCE_OPTIONS;

const instances = new Map<AjvPurpose, Ajv>();

/** The one Ajv instance for `purpose`, made on first use. */
export function ajvFor(purpose: AjvPurpose): Ajv {
  let ajv = instances.get(purpose);
  if (!ajv) {
    ajv = new Ajv({ strict: false, ...INSTANCE_OPTIONS[purpose] });
    addFormats(ajv);
    instances.set(purpose, ajv);
  }
  return ajv;
}

/**
 * Compiles `schema` on the instance for `purpose`, or returns the function already compiled for its
 * `$id`: the same plugin or file loaded by a second gateway in one process must not be refused as a
 * duplicate id.
 */
export function compileSchema(purpose: AjvPurpose, schema: Record<string, unknown>) {
  const ajv = ajvFor(purpose);
  const id = typeof schema.$id === 'string' ? schema.$id : undefined;
  return (id ? ajv.getSchema(id) : undefined) ?? ajv.compile(schema);
}

/** One readable line per problem: `/path/to/field: message`. */
export function formatAjvErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const where = e.instancePath || '/';
    const extra =
      e.keyword === 'additionalProperties'
        ? ` ('${(e.params as { additionalProperty: string }).additionalProperty}')`
        : e.keyword === 'enum'
          ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')})`
          : '';
    return `${where}: ${e.message ?? e.keyword}${extra}`;
  });
}
