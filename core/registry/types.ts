/**
 * The registry as the REST interface serves it (spec section 2.5–2.7): providers, and models with
 * their parameter definitions. Normalised at boot: display names filled in, `required` always set
 * on variables, timestamps in ISO 8601 UTC.
 */

export interface Provider {
  readonly name: string;
  readonly displayName: string;
}

interface Definition {
  readonly name: string;
  readonly description?: string;
}

export type ConstantDefinition = Definition &
  (
    | { readonly type: 'integer' | 'number'; readonly value: number }
    | { readonly type: 'string'; readonly value: string }
    | { readonly type: 'boolean'; readonly value: boolean }
    | { readonly type: 'enum'; readonly value: readonly string[] }
  );

export type VariableDefinition = Definition & { readonly required: boolean } & (
    | { readonly type: 'integer' | 'number'; readonly min?: number; readonly max?: number; readonly default?: number }
    | { readonly type: 'string'; readonly minLength?: number; readonly maxLength?: number }
    | { readonly type: 'boolean'; readonly default?: boolean }
    | { readonly type: 'enum'; readonly values: readonly string[]; readonly default?: string }
  );

export type ParameterType = VariableDefinition['type'];

export interface ModelParameters {
  readonly constants: readonly ConstantDefinition[];
  readonly variables: readonly VariableDefinition[];
}

export interface Model {
  readonly name: string;
  readonly displayName: string;
  readonly provider: Provider;
  readonly parameters: ModelParameters;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The JSON Schema compiled for a model's variables (draft-07), as served by `…/schema`. */
export type ConfigSchema = Readonly<Record<string, unknown>>;
