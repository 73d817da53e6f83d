import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';

describe('specs plugin: data-type schemas under {specs_url}', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['specs'] } }));
  });
  afterAll(() => gw.close());

  it('{specs_url} is the base URL + /specs', () => {
    expect(gw.gateway.dataTypes.specsUrl).toBe(`${gw.httpUrl}/specs`);
  });

  it('GET /specs lists the published files with their URLs', async () => {
    const res = await request(gw.httpUrl).get('/specs').expect(200);
    expect(res.body.files).toEqual([
      { name: 'common.json', url: `${gw.httpUrl}/specs/common.json` },
      { name: 'gpt.json', url: `${gw.httpUrl}/specs/gpt.json` },
    ]);
  });

  it('GET /specs/common.json has JsonObject', async () => {
    const res = await request(gw.httpUrl)
      .get('/specs/common.json')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    expect(res.body.JsonObject).toMatchObject({ type: 'object' });
  });

  it('GET /specs/gpt.json has the chat types', async () => {
    const res = await request(gw.httpUrl).get('/specs/gpt.json').expect(200);
    for (const type of ['ChatCompletionRequest', 'ChatCompletionConfig', 'ChatCompletionDirectProxy', 'ChatMessage', 'ContentPart']) {
      expect(res.body[type], type).toBeTypeOf('object');
    }
  });

  it('a {specs_url}/<file>#/<Type> reference resolves with a stock JSON Schema validator', async () => {
    const dataType = `${gw.gateway.dataTypes.specsUrl}/gpt.json#/ChatCompletionDirectProxy`;
    const [file, pointer] = dataType.split('#') as [string, string];
    const doc = (await request(file).get('')).body;
    const ajv = new Ajv({ strict: false });
    ajv.addSchema(doc, file);
    const validate = ajv.getSchema(`${file}#${pointer}`)!;
    expect(validate({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })).toBe(true);
    expect(validate({ messages: [] })).toBe(false);
  });

  it('an unknown file → 404', async () => {
    const res = await request(gw.httpUrl).get('/specs/nope.json').expect(404);
    expect(res.body.error.code).toBe('ENTITY_NOT_FOUND_BY_ID');
  });
});

describe('DataTypes checks', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(testConfigInput());
  });
  afterAll(() => gw.close());

  const check = (type: string, data: unknown) => {
    const types = gw.gateway.dataTypes;
    types.checkFor(`${types.specsUrl}/${type}`)!(data);
  };

  it('accepts OpenAI and Anthropic chat shapes', () => {
    check('gpt.json#/ChatCompletionRequest', {
      model: 'x',
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      ],
    });
    check('gpt.json#/ChatCompletionDirectProxy', {
      model: 'claude',
      max_tokens: 5,
      system: 'be brief',
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }],
    });
    check('gpt.json#/ChatCompletionConfig', { temperature: 0.2, stop: ['\n'], max_tokens: null, tools: [] });
    check('common.json#/JsonObject', {});
    check('common.json#JsonObject', { a: 1 });
  });

  it.each([
    ['gpt.json#/ChatCompletionConfig', { temperature: 3 }, '/temperature: must be <= 2'],
    [
      'gpt.json#/ChatCompletionRequest',
      { messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      "/messages/0/content/0: must have required property 'text'",
    ],
    [
      'gpt.json#/ChatCompletionRequest',
      {
        messages: [
          { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'not base64!' } }] },
        ],
      },
      '/messages/0/content/0/source/data: must match pattern',
    ],
    ['gpt.json#/ChatCompletionDirectProxy', { messages: [{ role: 'user', content: 'x' }] }, "/: must have required property 'model'"],
    ['common.json#/JsonObject', [1], '/: must be object'],
  ])('%s rejects %j', (type, data, reason) => {
    expect(() => check(type, data)).toThrow(
      expect.objectContaining({ status: 400, code: 'DATA_TYPE_MISMATCH', message: expect.stringContaining(reason) }),
    );
  });

  it('other data types are not checked; an unknown published type is 400', () => {
    const types = gw.gateway.dataTypes;
    expect(types.checkFor(undefined)).toBeUndefined();
    expect(types.checkFor('application/json')).toBeUndefined();
    expect(types.checkFor('https://elsewhere.example/specs/gpt.json#/ChatCompletionRequest')).toBeUndefined();
    expect(types.checkFor(`${types.specsUrl}-not/gpt.json#/ChatCompletionRequest`)).toBeUndefined();
    expect(() => types.checkFor(`${types.specsUrl}/gpt.json#/Nope`)).toThrow(expect.objectContaining({ code: 'UNKNOWN_DATA_TYPE' }));
    expect(() => types.checkFor(`${types.specsUrl}/other.json#/X`)).toThrow(expect.objectContaining({ code: 'UNKNOWN_DATA_TYPE' }));
    expect(types.checkFor('http://caller.example:1/specs/gpt.json#/ChatCompletionRequest', 'http://caller.example:1')).toBeTypeOf(
      'function',
    );
  });
});
