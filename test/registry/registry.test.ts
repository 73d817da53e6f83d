import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/config/load.js';
import { BootError } from '../../core/errors.js';
import { createRegistry, type Registry } from '../../core/registry/registry.js';
import { testConfigInput } from '../support/gateway.js';
import { registryFixture } from '../support/registry-fixture.js';

const BOOT = new Date('2026-01-01T00:00:00Z');

function registryOf(registry: Record<string, unknown>, services?: unknown[]): Registry {
  const input = testConfigInput({ registry });
  if (services) input.services = services;
  return createRegistry(buildConfig(input, { env: {} }), BOOT);
}

describe('registry content', () => {
  const registry = registryOf(registryFixture());

  it('lists providers with display names (defaulting to the name)', () => {
    expect(registry.providers()).toEqual([
      { name: 'acme', displayName: 'ACME Corp' },
      { name: 'globex', displayName: 'globex' },
    ]);
  });

  it('lists a model under each provider that offers it, with that provider embedded', () => {
    expect(registry.models('acme')!.map((m) => m.name)).toEqual(['acme-chat', 'acme-embed', 'acme-strict']);
    expect(registry.models('globex')!.map((m) => m.name)).toEqual(['acme-chat']);
    expect(registry.model('globex', 'acme-chat')!.provider).toEqual({ name: 'globex', displayName: 'globex' });
    expect(registry.model('acme', 'acme-chat')!.provider).toEqual({ name: 'acme', displayName: 'ACME Corp' });
    expect(registry.models('initech')).toBeUndefined();
    expect(registry.model('globex', 'acme-embed')).toBeUndefined();
  });

  it('normalises timestamps to ISO 8601 UTC, defaulting to the boot time, updatedAt to createdAt', () => {
    const chat = registry.model('acme', 'acme-chat')!;
    expect(chat.createdAt).toBe('2025-01-02T01:04:05.000Z');
    expect(chat.updatedAt).toBe('2025-02-01T00:00:00.000Z');
    const embed = registry.model('acme', 'acme-embed')!;
    expect(embed.updatedAt).toBe('2024-06-01T00:00:00.000Z');
    expect(registry.model('acme', 'acme-strict')!.createdAt).toBe(BOOT.toISOString());
  });

  it('fills required: false and empty arrays, keeps every definition field', () => {
    const chat = registry.model('acme', 'acme-chat')!;
    expect(chat.parameters.constants).toHaveLength(5);
    expect(chat.parameters.variables[0]).toEqual({ type: 'integer', name: 'max_tokens', min: 1, max: 4096, default: 256, required: false });
    expect(chat.parameters.variables[4]).toEqual({
      type: 'enum',
      name: 'quality',
      values: ['low', 'high'],
      default: 'low',
      required: false,
    });
    expect(registry.model('acme', 'acme-embed')!.parameters.variables).toEqual([]);
  });

  it('compiles a JSON Schema for the variables, with bounds and defaults as annotations', () => {
    expect(registry.configSchema('acme', 'acme-chat')).toMatchObject({
      type: 'object',
      additionalProperties: true,
      properties: {
        max_tokens: { type: ['integer', 'null'], minimum: 1, maximum: 4096, default: 256 },
        temperature: { type: ['number', 'null'], minimum: 0, maximum: 2, default: 1, description: 'Sampling temperature' },
        suffix: { type: ['string', 'null'], minLength: 1, maxLength: 8 },
        logprobs: { type: ['boolean', 'null'], default: false },
        quality: { type: ['string', 'null'], enum: ['low', 'high', null], default: 'low' },
      },
    });
    expect(registry.configSchema('acme', 'acme-strict')).toMatchObject({ required: ['n', 'top_p', 'user', 'echo', 'mode'] });
  });

  it('reads registry files named in the config and merges them with inline entries', () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-'));
    writeFileSync(
      join(dir, 'extra.yaml'),
      [
        'providers:',
        '  - name: initech',
        'models:',
        '  - name: tps',
        '    providers: [initech, acme]',
        '    parameters:',
        '      variables:',
        '        - { type: integer, name: copies, min: 1, max: 3 }',
      ].join('\n'),
    );
    const config = buildConfig(testConfigInput({ registry: { ...registryFixture(), files: ['extra.yaml'] } }), { env: {}, baseDir: dir });
    const merged = createRegistry(config, BOOT);
    expect(merged.providers().map((p) => p.name)).toEqual(['acme', 'globex', 'initech']);
    expect(merged.models('acme')!.map((m) => m.name)).toContain('tps');
    expect(() => merged.validate({ name: 's', provider: 'initech', defaultModel: 'tps' }, { copies: 4 })).toThrow(/copies/);
  });
});

/** The BootError of building a registry with `models`, as text. */
function bootError(models: unknown[], extra: Record<string, unknown> = {}): BootError {
  try {
    registryOf({ providers: [{ name: 'acme' }], models, ...extra });
  } catch (err) {
    expect(err).toBeInstanceOf(BootError);
    expect((err as BootError).code).toBe('REGISTRY_INVALID');
    return err as BootError;
  }
  throw new Error('expected a boot error');
}

const model = (variables: unknown[], constants: unknown[] = []) => [
  { name: 'bad-model', providers: ['acme'], parameters: { constants, variables } },
];

describe('bad parameter definitions stop the boot with REGISTRY_INVALID naming the model', () => {
  it.each([
    [
      'integer default below min',
      { type: 'integer', name: 'n', min: 1, max: 5, default: 0 },
      /model 'bad-model'.*variable 'n': default 0 is below min 1/,
    ],
    [
      'integer default above max',
      { type: 'integer', name: 'n', min: 1, max: 5, default: 6 },
      /model 'bad-model'.*variable 'n': default 6 is above max 5/,
    ],
    [
      'number default above max',
      { type: 'number', name: 't', min: 0, max: 2, default: 2.5 },
      /model 'bad-model'.*variable 't': default 2.5 is above max 2/,
    ],
    ['number default below min', { type: 'number', name: 't', min: 0, default: -1 }, /model 'bad-model'.*default -1 is below min 0/],
    [
      'enum default not among its values',
      { type: 'enum', name: 'q', values: ['low', 'high'], default: 'mid' },
      /model 'bad-model'.*variable 'q': default 'mid' is not one of its values \(low, high\)/,
    ],
    [
      'integer min greater than max',
      { type: 'integer', name: 'n', min: 10, max: 1 },
      /model 'bad-model'.*variable 'n': min 10 is greater than max 1/,
    ],
    [
      'number min greater than max',
      { type: 'number', name: 't', min: 1.5, max: 0.5 },
      /model 'bad-model'.*min 1.5 is greater than max 0.5/,
    ],
    [
      'string minLength greater than maxLength',
      { type: 'string', name: 's', minLength: 5, maxLength: 2 },
      /model 'bad-model'.*minLength 5 is greater than maxLength 2/,
    ],
    [
      'a field of another type',
      { type: 'string', name: 's', min: 1 },
      /model 'bad-model'.*parameters\/variables\/0: must NOT have additional properties \('min'\)/,
    ],
    ['a misspelt field', { type: 'integer', name: 'n', minimum: 1 }, /model 'bad-model'.*\('minimum'\)/],
    [
      'an integer bound that is not an integer',
      { type: 'integer', name: 'n', max: 1.5 },
      /model 'bad-model'.*variables\/0\/max: must be integer/,
    ],
    [
      'a default of the wrong type',
      { type: 'boolean', name: 'b', default: 'yes' },
      /model 'bad-model'.*variables\/0\/default: must be boolean/,
    ],
    ['an unknown type', { type: 'float', name: 'f' }, /model 'bad-model'.*variables\/0\/type: must be equal to one of the allowed values/],
    ['an enum without values', { type: 'enum', name: 'e' }, /model 'bad-model'.*must have required property 'values'/],
    ['an enum with no values', { type: 'enum', name: 'e', values: [] }, /model 'bad-model'.*values: must NOT have fewer than 1 items/],
    ['a definition without a name', { type: 'integer' }, /model 'bad-model'.*must have required property 'name'/],
  ])('%s', (_what, variable, message) => {
    expect(bootError(model([variable])).message).toMatch(message);
  });

  it('a constant whose value does not match its type', () => {
    expect(bootError(model([], [{ type: 'enum', name: 'm', value: 'text' }])).message).toMatch(
      /model 'bad-model'.*constants\/0\/value: must be array/,
    );
    expect(bootError(model([], [{ type: 'integer', name: 'c' }])).message).toMatch(
      /model 'bad-model'.*must have required property 'value'/,
    );
  });

  it('a parameter name used twice', () => {
    expect(bootError(model([{ type: 'boolean', name: 'x' }], [{ type: 'boolean', name: 'x', value: true }])).message).toMatch(
      /model 'bad-model'.*parameter 'x' is defined twice/,
    );
  });

  it('an undeclared provider, a duplicate model, a duplicate provider, a bad timestamp', () => {
    expect(bootError([{ name: 'm1', providers: ['nobody'] }]).message).toMatch(/model 'm1'.*provider 'nobody' is not declared/);
    expect(
      bootError([
        { name: 'm1', providers: ['acme'] },
        { name: 'm1', providers: ['acme'] },
      ]).message,
    ).toMatch(/model 'm1'.*already has a model of that name/);
    expect(bootError([], { providers: [{ name: 'acme' }, { name: 'acme' }] }).message).toMatch(/provider 'acme'.*declared twice/);
  });

  it('lists every problem at once', () => {
    const err = bootError([
      { name: 'm1', providers: ['acme'], parameters: { variables: [{ type: 'integer', name: 'a', min: 2, max: 1 }] } },
      { name: 'm2', providers: ['acme'], parameters: { variables: [{ type: 'enum', name: 'b', values: ['x'], default: 'y' }] } },
    ]);
    expect(err.problems).toHaveLength(2);
    expect(err.problems[0]).toMatch(/model 'm1'/);
    expect(err.problems[1]).toMatch(/model 'm2'/);
  });

  it('a timestamp without a time zone is a config error', () => {
    expect(() =>
      registryOf({ providers: [{ name: 'acme' }], models: [{ name: 'm', providers: ['acme'], createdAt: 'yesterday' }] }),
    ).toThrow(/createdAt.*date-time/);
  });

  it('a bad registry file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-'));
    writeFileSync(
      join(dir, 'bad.json'),
      JSON.stringify({
        models: [{ name: 'x', providers: ['acme'], parameters: { variables: [{ type: 'number', name: 't', max: 1, default: 3 }] } }],
      }),
    );
    writeFileSync(join(dir, 'wrong.json'), JSON.stringify({ model: [] }));
    const config = buildConfig(
      testConfigInput({ registry: { providers: [{ name: 'acme' }], files: ['bad.json', 'wrong.json', 'missing.json'] } }),
      { env: {}, baseDir: dir },
    );
    let err: BootError | undefined;
    try {
      createRegistry(config);
    } catch (e) {
      err = e as BootError;
    }
    expect(err?.code).toBe('REGISTRY_INVALID');
    expect(err!.problems.join('\n')).toMatch(/model 'x' \(.*bad\.json\): variable 't': default 3 is above max 1/);
    expect(err!.problems.join('\n')).toMatch(/wrong\.json: \/: must NOT have additional properties \('model'\)/);
    expect(err!.problems.join('\n')).toMatch(/missing\.json cannot be read/);
  });

  it('services must name providers and models the registry has, and their named configs must pass', () => {
    const service = (extra: Record<string, unknown>) => ({ id: 10, name: 'svc', account: 'demo', ...extra });
    expect(() => registryOf(registryFixture(), [service({ provider: 'initech' })])).toThrow(
      /service 'svc': provider 'initech' is not in the registry/,
    );
    expect(() => registryOf(registryFixture(), [service({ provider: 'globex', defaultModel: 'acme-embed' })])).toThrow(
      /service 'svc': provider 'globex' has no model 'acme-embed'/,
    );
    expect(() => registryOf(registryFixture(), [service({ defaultModel: 'nope' })])).toThrow(/defaultModel 'nope' is not in the registry/);
    expect(() =>
      registryOf(registryFixture(), [
        service({ provider: 'acme', defaultModel: 'acme-chat', configs: [{ id: 3, name: 'hot', config: { temperature: 9 } }] }),
      ]),
    ).toThrow(/service 'svc': config 3 \(hot\): Parameter 'temperature' must be at most 2/);
  });
});

describe('validation of configs against the registry', () => {
  const registry = registryOf(registryFixture());
  const chat = { name: 'svc', provider: 'acme', defaultModel: 'acme-chat' };
  const strict = { name: 'svc', provider: 'acme', defaultModel: 'acme-strict' };

  /** The GatewayError `validate` throws, or undefined when the config passes. */
  const errorOf = (config: unknown, service: { name: string; provider?: string; defaultModel?: string } = chat, modelName?: string) => {
    try {
      registry.validate(service, config, modelName);
      return undefined;
    } catch (err) {
      return err as { status: number; code: string; param: string; args: Record<string, string>; message: string };
    }
  };

  it('valid values of every type pass, as do null for optional variables and unknown keys', () => {
    expect(errorOf({ max_tokens: 4096, temperature: 0.7, suffix: 'abc', logprobs: true, quality: 'high' })).toBeUndefined();
    expect(errorOf({ max_tokens: 1, temperature: 0, suffix: 'x', logprobs: false, quality: 'low' })).toBeUndefined();
    expect(errorOf({ max_tokens: null, temperature: null, suffix: null, logprobs: null, quality: null })).toBeUndefined();
    expect(errorOf({ stream: true, tools: [], user: 42 })).toBeUndefined();
    expect(errorOf({})).toBeUndefined();
    expect(errorOf({ n: 1, top_p: 0.5, user: '', echo: false, mode: 'b' }, strict)).toBeUndefined();
  });

  it.each([
    // [what, config, code, param, args]
    ['integer of the wrong type', { max_tokens: 2.5 }, 'PARAMETER_TYPE_INVALID', 'max_tokens', { expected: 'an integer', value: '2.5' }],
    ['integer as a string', { max_tokens: '5' }, 'PARAMETER_TYPE_INVALID', 'max_tokens', { expected: 'an integer', value: '"5"' }],
    ['integer below min', { max_tokens: 0 }, 'PARAMETER_OUT_OF_RANGE', 'max_tokens', { bound: 'min', limit: '1', value: '0' }],
    ['integer above max', { max_tokens: 5000 }, 'PARAMETER_OUT_OF_RANGE', 'max_tokens', { bound: 'max', limit: '4096', value: '5000' }],
    ['number of the wrong type', { temperature: 'hot' }, 'PARAMETER_TYPE_INVALID', 'temperature', { expected: 'a number', value: '"hot"' }],
    ['number below min', { temperature: -0.1 }, 'PARAMETER_OUT_OF_RANGE', 'temperature', { bound: 'min', limit: '0', value: '-0.1' }],
    ['number above max', { temperature: 2.01 }, 'PARAMETER_OUT_OF_RANGE', 'temperature', { bound: 'max', limit: '2', value: '2.01' }],
    ['string of the wrong type', { suffix: 5 }, 'PARAMETER_TYPE_INVALID', 'suffix', { expected: 'a string', value: '5' }],
    ['string shorter than minLength', { suffix: '' }, 'PARAMETER_OUT_OF_RANGE', 'suffix', { bound: 'minLength', limit: '1', length: '0' }],
    [
      'string longer than maxLength',
      { suffix: '123456789' },
      'PARAMETER_OUT_OF_RANGE',
      'suffix',
      { bound: 'maxLength', limit: '8', length: '9' },
    ],
    ['boolean of the wrong type', { logprobs: 'true' }, 'PARAMETER_TYPE_INVALID', 'logprobs', { expected: 'a boolean', value: '"true"' }],
    ['enum of the wrong type', { quality: 1 }, 'PARAMETER_TYPE_INVALID', 'quality', { expected: 'a string', value: '1' }],
    [
      'enum value not among values',
      { quality: 'ultra' },
      'PARAMETER_VALUE_NOT_ALLOWED',
      'quality',
      { allowed: 'low, high', value: '"ultra"' },
    ],
  ])('%s → 400 naming the parameter', (_what, config, code, param, args) => {
    const err = errorOf(config)!;
    expect(err).toMatchObject({ status: 400, code, param, args: { param, model: 'acme-chat', ...args } });
    expect(err.message).toContain(`'${param}'`);
  });

  it('messages say the parameter, the bound and the value', () => {
    expect(errorOf({ temperature: 3.5 })!.message).toBe("Parameter 'temperature' must be at most 2 (max of model 'acme-chat'), got 3.5");
    expect(errorOf({ max_tokens: 0 })!.message).toBe("Parameter 'max_tokens' must be at least 1 (min of model 'acme-chat'), got 0");
    expect(errorOf({ suffix: '123456789' })!.message).toBe(
      "Parameter 'suffix' must be at most 8 characters long (maxLength of model 'acme-chat'), got \"123456789\" (9 characters)",
    );
    expect(errorOf({ quality: 'ultra' })!.message).toBe("Parameter 'quality' must be one of low, high (model 'acme-chat'), got \"ultra\"");
    expect(errorOf({ logprobs: 'yes' })!.message).toBe("Parameter 'logprobs' must be a boolean (model 'acme-chat'), got \"yes\"");
  });

  it.each(['n', 'top_p', 'user', 'echo', 'mode'])('a missing required %s → 400 PARAMETER_REQUIRED', (name) => {
    const full: Record<string, unknown> = { n: 1, top_p: 0.5, user: 'u', echo: true, mode: 'a' };
    delete full[name];
    expect(errorOf(full, strict)).toMatchObject({
      status: 400,
      code: 'PARAMETER_REQUIRED',
      param: name,
      message: `Parameter '${name}' is required by model 'acme-strict'`,
    });
  });

  it('null is not a value for a required variable', () => {
    expect(errorOf({ n: null, top_p: 0.5, user: 'u', echo: true, mode: 'a' }, strict)).toMatchObject({
      code: 'PARAMETER_TYPE_INVALID',
      param: 'n',
    });
  });

  it('registry defaults are not filled in: the config is left exactly as sent', () => {
    const config = { temperature: 0.3 };
    registry.validate(chat, config);
    expect(config).toEqual({ temperature: 0.3 });
  });

  it('the model named by the request, else by the config, else the service default', () => {
    expect(errorOf({ temperature: 0.3 }, chat, 'acme-strict')).toMatchObject({ code: 'PARAMETER_REQUIRED' });
    expect(errorOf({ model: 'acme-strict' }, chat)).toMatchObject({ code: 'PARAMETER_REQUIRED', args: { model: 'acme-strict' } });
    expect(errorOf({ temperature: 9 }, { name: 'svc', provider: 'globex', defaultModel: 'acme-chat' })).toMatchObject({
      code: 'PARAMETER_OUT_OF_RANGE',
    });
  });

  it('models unknown to the registry, services without a model and absent configs are not checked', () => {
    expect(errorOf({ model: 'someone-else', temperature: 99 })).toBeUndefined();
    expect(errorOf({ temperature: 99 }, chat, 'someone-else')).toBeUndefined();
    expect(errorOf({ temperature: 99 }, { name: 'plain' })).toBeUndefined();
    expect(errorOf({ temperature: 99 }, { name: 'p', provider: 'acme' })).toBeUndefined();
    expect(errorOf(undefined)).toBeUndefined();
    expect(errorOf(null)).toBeUndefined();
  });

  it('without a provider, a model is found by its name', () => {
    expect(errorOf({ temperature: 99 }, { name: 'svc', defaultModel: 'acme-chat' })).toMatchObject({ code: 'PARAMETER_OUT_OF_RANGE' });
  });

  it('a config that is not an object → 400 VALIDATION_FAILED on config', () => {
    expect(errorOf([1, 2])).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', param: 'config' });
    expect(errorOf('temperature=1')).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', param: 'config' });
  });
});

describe('the shipped demo registry file', () => {
  it('loads and offers echo-chat under both of its providers', () => {
    const config = buildConfig(testConfigInput({ registry: { files: ['examples/registry/demo-registry.yaml'] } }), {
      env: {},
      baseDir: process.cwd(),
    });
    const registry = createRegistry(config, BOOT);
    expect(registry.models('example')!.map((m) => m.name)).toEqual(['echo-chat', 'echo-embed']);
    expect(registry.model('example-mirror', 'echo-chat')!.createdAt).toBe('2026-01-01T00:00:00.000Z');
  });
});
