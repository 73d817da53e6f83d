import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { registryFixture } from '../support/registry-fixture.js';

describe('model-registry plugin', () => {
  let gw: TestGateway;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    gw = await startTestGateway(testConfigInput({ registry: registryFixture(), plugins: { enabled: ['model-registry'] } }));
    http = request(gw.gateway.app.callback());
  });
  afterAll(() => gw.close());

  it('GET /providers lists every provider, without authentication', async () => {
    const res = await http
      .get('/api/platformcore/providers')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    expect(res.body).toEqual({
      providers: [
        { name: 'acme', displayName: 'ACME Corp' },
        { name: 'globex', displayName: 'globex' },
      ],
    });
  });

  it('GET /providers/{p}/models lists the models of a provider that offers two', async () => {
    const res = await http.get('/api/platformcore/providers/acme/models').expect(200);
    expect(Object.keys(res.body)).toEqual(['models']);
    expect(res.body.models.map((m: { name: string }) => m.name)).toEqual(['acme-chat', 'acme-embed', 'acme-strict']);
    for (const model of res.body.models) expect(model.provider).toEqual({ name: 'acme', displayName: 'ACME Corp' });
  });

  it('a model offered by two providers is listed under each, with that provider', async () => {
    const res = await http.get('/api/platformcore/providers/globex/models').expect(200);
    expect(res.body.models).toHaveLength(1);
    expect(res.body.models[0]).toMatchObject({ name: 'acme-chat', provider: { name: 'globex', displayName: 'globex' } });
  });

  it('GET /providers/{p}/models/{m} is the Model itself, with every field', async () => {
    const res = await http.get('/api/platformcore/providers/acme/models/acme-chat').expect(200);
    expect(res.body).toEqual({
      name: 'acme-chat',
      displayName: 'ACME Chat',
      provider: { name: 'acme', displayName: 'ACME Corp' },
      parameters: {
        constants: [
          { type: 'integer', name: 'contextWindow', value: 8192 },
          { type: 'number', name: 'pricePer1k', value: 0.5 },
          { type: 'string', name: 'family', value: 'chat' },
          { type: 'boolean', name: 'vision', value: true },
          { type: 'enum', name: 'modalities', value: ['text', 'image'] },
        ],
        variables: [
          { type: 'integer', name: 'max_tokens', min: 1, max: 4096, default: 256, required: false },
          { type: 'number', name: 'temperature', description: 'Sampling temperature', min: 0, max: 2, default: 1, required: false },
          { type: 'string', name: 'suffix', minLength: 1, maxLength: 8, required: false },
          { type: 'boolean', name: 'logprobs', default: false, required: false },
          { type: 'enum', name: 'quality', values: ['low', 'high'], default: 'low', required: false },
        ],
      },
      createdAt: '2025-01-02T01:04:05.000Z',
      updatedAt: '2025-02-01T00:00:00.000Z',
    });
    expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('GET …/schema is the JSON Schema compiled for the model variables', async () => {
    const res = await http.get('/api/platformcore/providers/acme/models/acme-strict/schema').expect(200);
    expect(res.body).toMatchObject({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      required: ['n', 'top_p', 'user', 'echo', 'mode'],
      properties: { mode: { type: 'string', enum: ['a', 'b'] }, n: { type: 'integer' } },
    });
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await http.get('/api/platformcore/providers').expect(200);
    await http.get('/api/platformcore/providers').set('If-None-Match', first.headers.etag!).expect(304);
  });

  it.each([
    ['/api/platformcore/providers/initech/models', 'PROVIDER_NOT_FOUND', 'providerName', "Provider 'initech' is not in the registry"],
    [
      '/api/platformcore/providers/initech/models/acme-chat',
      'PROVIDER_NOT_FOUND',
      'providerName',
      "Provider 'initech' is not in the registry",
    ],
    [
      '/api/platformcore/providers/globex/models/acme-embed',
      'REGISTRY_MODEL_NOT_FOUND',
      'modelName',
      "Provider 'globex' has no model 'acme-embed' in the registry",
    ],
    [
      '/api/platformcore/providers/acme/models/nope/schema',
      'REGISTRY_MODEL_NOT_FOUND',
      'modelName',
      "Provider 'acme' has no model 'nope' in the registry",
    ],
  ])('GET %s → 404 in the error envelope', async (path, code, param, message) => {
    const res = await http.get(path).expect(404);
    expect(res.body).toMatchObject({ error: { code, param, message, type: 'not_found_error' } });
  });
});
