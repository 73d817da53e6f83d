import type { ErrorObject, ValidateFunction } from 'ajv';
import { gatewayError, type GatewayError } from '../errors.js';
import { ajvFor } from '../validation/ajv.js';
import type { ConfigSchema, ParameterType, VariableDefinition } from './types.js';

/**
 * A model's variables compiled once, at boot, into a JSON Schema and an ajv function. Checking a
 * config is one call of that function; on the success path nothing is allocated. Only a failure
 * builds an error, from the first problem found (ajv runs with allErrors off).
 */
export interface CompiledVariables {
  readonly model: string;
  readonly schema: ConfigSchema;
  /** Throws a 400 GatewayError naming the parameter, the bound and the value. */
  check(config: Record<string, unknown>): void;
}

/**
 * The JSON Schema of a config for `variables`: each variable a property with its bounds, required
 * ones listed in `required`. Other properties are allowed (configs carry settings the registry does
 * not describe). An optional variable may be null, which OpenAI-style clients send for "not set".
 * Defaults are published as `default` for clients; the gateway does not fill them in.
 */
export function variablesSchema(modelLabel: string, variables: readonly VariableDefinition[]): ConfigSchema {
  const properties: Record<string, Record<string, unknown>> = {};
  const required: string[] = [];
  for (const v of variables) {
    const nullable = !v.required;
    const p: Record<string, unknown> = {};
    switch (v.type) {
      case 'integer':
      case 'number':
        p.type = nullable ? [v.type, 'null'] : v.type;
        if (v.min !== undefined) p.minimum = v.min;
        if (v.max !== undefined) p.maximum = v.max;
        if (v.default !== undefined) p.default = v.default;
        break;
      case 'string':
        p.type = nullable ? ['string', 'null'] : 'string';
        if (v.minLength !== undefined) p.minLength = v.minLength;
        if (v.maxLength !== undefined) p.maxLength = v.maxLength;
        break;
      case 'boolean':
        p.type = nullable ? ['boolean', 'null'] : 'boolean';
        if (v.default !== undefined) p.default = v.default;
        break;
      case 'enum':
        p.type = nullable ? ['string', 'null'] : 'string';
        p.enum = nullable ? [...v.values, null] : [...v.values];
        if (v.default !== undefined) p.default = v.default;
        break;
    }
    if (v.description !== undefined) p.description = v.description;
    properties[v.name] = p;
    if (v.required) required.push(v.name);
  }
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: `Predict configuration of ${modelLabel}`,
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: true,
  };
}

export function compileVariables(
  model: string,
  variables: readonly VariableDefinition[],
  schema = variablesSchema(model, variables),
): CompiledVariables {
  // The schemas carry no $id: one compiled function per model.
  const validate = ajvFor('callerData').compile(schema);
  const byName = new Map(variables.map((v) => [v.name, v]));
  return {
    model,
    schema,
    check(config) {
      if (!validate(config)) throw parameterError(model, byName, validate, config);
    },
  };
}

const EXPECTED: Record<ParameterType, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  enum: 'a string',
};

function parameterError(
  model: string,
  byName: ReadonlyMap<string, VariableDefinition>,
  validate: ValidateFunction,
  config: Record<string, unknown>,
): GatewayError {
  const e: ErrorObject | undefined = validate.errors?.[0];
  if (!e) return gatewayError('VALIDATION_FAILED', { param: 'config', args: { reason: `config rejected by model '${model}'` } });
  if (e.keyword === 'required') {
    const param = (e.params as { missingProperty: string }).missingProperty;
    return gatewayError('PARAMETER_REQUIRED', { param, args: { param, model } });
  }
  const param = pointerHead(e.instancePath);
  const variable = byName.get(param);
  const value = config[param];
  if (!variable)
    return gatewayError('VALIDATION_FAILED', {
      param: param || 'config',
      args: { reason: `${e.instancePath || 'config'} ${e.message ?? e.keyword}` },
    });
  const shown = showValue(value);
  switch (e.keyword) {
    case 'type':
      return gatewayError('PARAMETER_TYPE_INVALID', { param, args: { param, model, expected: EXPECTED[variable.type], value: shown } });
    case 'minimum':
    case 'maximum': {
      const bound = e.keyword === 'minimum' ? 'min' : 'max';
      return gatewayError('PARAMETER_OUT_OF_RANGE', {
        param,
        args: { param, model, bound, limit: (e.params as { limit: number }).limit, value: shown },
      });
    }
    case 'minLength':
    case 'maxLength': {
      const length = typeof value === 'string' ? [...value].length : 0;
      return gatewayError('PARAMETER_OUT_OF_RANGE', {
        param,
        args: {
          param,
          model,
          bound: e.keyword,
          limit: (e.params as { limit: number }).limit,
          value: `${shown} (${length} characters)`,
          length,
        },
      });
    }
    case 'enum':
      return gatewayError('PARAMETER_VALUE_NOT_ALLOWED', {
        param,
        args: { param, model, allowed: variable.type === 'enum' ? variable.values.join(', ') : '', value: shown },
      });
    default:
      return gatewayError('VALIDATION_FAILED', { param, args: { reason: `parameter '${param}' ${e.message ?? e.keyword}` } });
  }
}

/** The first segment of a JSON pointer (`/top_p` → `top_p`), unescaped. */
function pointerHead(pointer: string): string {
  const head = pointer.split('/')[1] ?? '';
  return head.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** A value as JSON text for an error message, cut short so a huge value cannot bloat the error. */
export function showValue(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
