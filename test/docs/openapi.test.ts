import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as ajvFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../core/config/load.js';
import { createGateway, type Gateway } from '../../core/gateway.js';
import { silentLogger } from '../../core/observe/logger.js';
import { bundledDocument } from '../../plugins/openapi/document.js';
import type { ModelService } from '../../sdk/index.js';
import { startDemoServices } from '../support/demo-services.js';
import { eventually } from '../support/gateway.js';

/**
 * schemas/openapi.yaml against the real demo: every operation is called at least once, and every
 * answer (status, content type, body) must be one the document describes. The demo's services run
 * in this process; the config is the demo's own.
 */
const DEMO = fileURLToPath(new URL('../../examples/demo/gateway.yaml', import.meta.url));
const KEY = 'demo-api-key-0123456789';
const document = bundledDocument();
const addFormats = ajvFormats.default as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addSchema({ ...document, $id: 'openapi' }, 'openapi');

interface Operation {
  path: string;
  method: string;
  pattern: RegExp;
  op: Record<string, any>;
}
const operations: Operation[] = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({
    path,
    method: method.toUpperCase(),
    pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    op,
  })),
);
const exercised = new Set<Operation>();

/**
 * One route's key, the same for a router path and a document path: parameters unnamed (`:id`, `*id`
 * and `{id}` alike), the optional `{/v1}` segment in the `/v1` form the document lists, and the
 * aliases the document's description names (sync predict also under `/api/platformgateway`, fitting
 * also under `/api/platformcore`, the standard chat adapter also under the demo's `aliasPrefix: /v1`)
 * in their listed form.
 */
function routeKey(method: string, path: string): string {
  const normalized = path
    .replace('{/v1}', '/v1')
    .replace(/^\/v1\//, '/api/adapters/chatapi/v1/')
    .replace(/:\w+|\*\w+|\{\w+\}/g, '{}')
    .replace(/^\/api\/platformcore\/account\//, '/api/platformgate/account/')
    .replace(
      /^\/api\/platformgateway\/(account\/\{\}\/model\/\{\}\/(?:predict|predict-with-config|predict-with-config-v2|ext))$/,
      '/api/platformgate/$1',
    );
  return `${method} ${normalized}`;
}

/** Resolves a local `$ref` of the document. */
function deref<T = any>(node: any): T {
  let value = node;
  while (value && typeof value.$ref === 'string') {
    value = value.$ref
      .slice(2)
      .split('/')
      .reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/')], document);
  }
  return value as T;
}

/** Checks one real answer against the document; returns the problems. */
async function conforms(method: string, url: string, response: Response): Promise<string[]> {
  const path = new URL(url).pathname;
  const operation = operations.find((o) => o.method === method && o.pattern.test(path));
  if (!operation) return [`${method} ${path}: no operation in the document`];
  exercised.add(operation);
  const responses = operation.op.responses as Record<string, unknown>;
  const described = deref(responses[String(response.status)] ?? responses.default);
  if (!described) return [`${method} ${path}: status ${response.status} is not described`];
  const text = await response.text();
  if (!described.content) return text ? [`${method} ${path}: ${response.status} should have no body, got ${text.slice(0, 80)}`] : [];
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const mediaKey = described.content[type] ? type : described.content['*/*'] ? '*/*' : undefined;
  if (!mediaKey) return [`${method} ${path}: ${response.status} ${type} is not among ${Object.keys(described.content).join(', ')}`];
  if (type !== 'application/json') return [];
  const index = Object.keys(responses).includes(String(response.status)) ? String(response.status) : 'default';
  const ref = (responses[index] as { $ref?: string }).$ref;
  const segment = (key: string) => encodeURIComponent(key.replace(/~/g, '~0').replace(/\//g, '~1'));
  const pointer = ref ? `openapi${ref}` : `openapi#/paths/${segment(operation.path)}/${operation.method.toLowerCase()}/responses/${index}`;
  const schemaRef = `${pointer}/content/${segment(mediaKey)}/schema`;
  const validate = ajv.getSchema(schemaRef) ?? ajv.compile({ $ref: schemaRef });
  if (validate(JSON.parse(text))) return [];
  return [`${method} ${path} ${response.status}: ${ajv.errorsText(validate.errors)} in ${text.slice(0, 200)}`];
}

describe('the OpenAPI document describes the demo', () => {
  let gateway: Gateway;
  let dataDir = '';
  let base = '';
  const services: ModelService[] = [];
  const problems: string[] = [];

  type CallInit = {
    body?: unknown;
    raw?: BodyInit;
    type?: string;
    key?: string | null;
    bearer?: boolean;
    keyHeader?: string;
    headers?: Record<string, string>;
  };
  const call = async (method: string, path: string, init: CallInit = {}) => {
    const headers: Record<string, string> = {};
    if (init.key !== null)
      headers[init.keyHeader ?? (init.bearer ? 'authorization' : 'PLATFORM-API-KEY')] = init.bearer
        ? `Bearer ${init.key ?? KEY}`
        : (init.key ?? KEY);
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.type) headers['content-type'] = init.type;
    Object.assign(headers, init.headers);
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
    });
    const copy = response.clone();
    problems.push(...(await conforms(method, `${base}${path}`, response)));
    return copy;
  };

  beforeAll(async () => {
    const config = loadConfigFile(DEMO, { env: { HTTP_PORT: '0', GRPC_PORT: '0' } });
    // Its own data folder: the tour fits and deletes a derived service, whose model files under the
    // demo's .data would meet those of other tests running at once (the docs examples fit one too).
    dataDir = mkdtempSync(join(tmpdir(), 'openapi-data-'));
    gateway = await createGateway({ ...config, store: { ...config.store, dataDir } }, { logger: silentLogger() });
    const { httpUrl, grpcAddress } = await gateway.start();
    base = httpUrl;
    services.push(...(await startDemoServices(grpcAddress)));
  });

  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await gateway?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('every answer of a tour of the API matches the document', async () => {
    const G = '/api/platformgate/account/demo';
    const A = '/api/platformgateway/account/demo';
    await call('GET', '/health', { key: null });
    await call('GET', '/health');
    await call('GET', '/health/live', { key: null });
    await call('GET', '/health/ready', { key: null });
    await call('GET', '/openapi.json', { key: null });
    await call('GET', '/console', { key: null });
    await call('GET', '/console/keys', { key: null });
    await call('GET', '/specs', { key: null });
    await call('GET', '/specs/gpt.json', { key: null });
    await call('GET', '/specs/nothing.json', { key: null });
    await call('GET', '/api/platformcore/providers', { key: null });
    await call('GET', '/api/platformcore/providers/demo/models', { key: null });
    await call('GET', '/api/platformcore/providers/demo/models/echo-1', { key: null });
    await call('GET', '/api/platformcore/providers/demo/models/echo-1/schema', { key: null });
    await call('GET', '/api/platformcore/providers/nobody/models', { key: null });

    await call('POST', `${G}/model/upper/predict`, { body: { text: 'hi' } });
    await call('POST', `${G}/model/upper/predict-with-config`, { body: { data: { text: 'hi' } } });
    await call('POST', `${G}/model/upper/predict-with-config-v2`, { body: { data: '{"text":"hi"}' } });
    await call('POST', `${G}/model/upper/ext`, { body: { methodName: 'count', params: { text: 'a b' } } });
    await call('POST', `${G}/model/upper/predict`, { body: { text: 'hi' }, key: 'wrong-key-0123456789' });
    await call('POST', `${G}/model/nothing/predict-with-config`, { body: { data: {} } });

    const created = await call('POST', `${A}/model/upper/async/predict`, { body: { text: 'hi' } });
    const taskId = (await created.json()) as string;
    await call('POST', `${A}/model/upper/async/predict-with-config`, { body: { data: { text: 'hi' } } });
    await call('POST', `${A}/model/upper/async/predict-with-config-v2`, { body: { data: '{"text":"hi"}' } });
    await eventually(
      async () =>
        ((await (await fetch(`${base}${A}/async/task/${taskId}`, { headers: { 'PLATFORM-API-KEY': KEY } })).json()) as any).status ===
        'COMPLETED',
      10_000,
      'the task',
    );
    await call('GET', `${A}/async/task/${taskId}`);
    await call('GET', `${A}/async/task/${taskId}/response`);
    await call('GET', `${A}/async/tasks?limit=2`);
    await call('GET', `${A}/async/tasks?limit=0`);
    await call('POST', `${A}/async/task/${taskId}/cancel`);
    await call('GET', `${A}/async/task/no-such-task`);

    const chat = { model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] };
    await call('POST', '/api/adapters/chatapi/v1/chat/completions', { body: chat, bearer: true });
    await call('POST', '/api/adapters/chatapi/v1/chat/completions', { body: { ...chat, stream: true }, bearer: true });
    await call('POST', '/api/adapters/chatapi/v1/chat/completions', { body: { ...chat, temperature: 9 }, bearer: true });
    await call('POST', '/api/adapters/chatapi/v1/completions', { body: { model: 'demo/echo', prompt: 'hi' }, bearer: true });
    await call('POST', '/api/adapters/chatapi/v1/embeddings', {
      body: { model: 'demo/echo', input: 'hi', encoding_format: 'float' },
      bearer: true,
    });
    await call('GET', '/api/adapters/chatapi/v1/models', { bearer: true });
    await call('GET', '/api/adapters/chatapi/v1/models/demo%2Fecho', { bearer: true });
    await call('POST', '/api/adapters/chatapi-direct/v1/chat/completions', { body: chat, bearer: true });
    const R = '/api/adapters/chatapi/v1/responses';
    const response = await call('POST', R, { body: { model: 'demo/echo', input: 'hi' }, bearer: true });
    const responseId = ((await response.json()) as any).id as string;
    await call('POST', R, { body: { model: 'demo/echo', input: 'hi', stream: true }, bearer: true });
    await call('POST', R, { body: { model: 'demo/echo' }, bearer: true });
    await call('GET', `${R}/${responseId}`, { bearer: true });
    await call('GET', `${R}/${responseId}/input_items?order=asc&limit=5`, { bearer: true });
    await call('GET', `${R}/resp_nothing/input_items`, { bearer: true });
    await call('DELETE', `${R}/${responseId}`, { bearer: true });
    await call('GET', `${R}/${responseId}`, { bearer: true });
    await call('DELETE', `${R}/${responseId}`, { bearer: true });

    const message = { model: 'demo/echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
    await call('POST', '/api/adapters/chatapi/v1/messages', { body: message, keyHeader: 'x-api-key' });
    await call('POST', '/api/adapters/chatapi/v1/messages', { body: { ...message, stream: true }, bearer: true });
    await call('POST', '/api/adapters/chatapi/v1/messages', { body: message, keyHeader: 'x-api-key', key: 'wrong-key-0123456789' });
    await call('POST', '/api/adapters/chatapi/v1/messages', { body: { model: 'demo/echo' }, keyHeader: 'x-api-key' });
    await call('POST', '/api/adapters/chatapi/v1/messages/count_tokens', {
      body: { model: 'demo/echo', messages: message.messages },
      keyHeader: 'x-api-key',
    });
    await call('POST', '/api/adapters/chatapi/v1/messages/count_tokens', {
      body: { model: 'demo/nothing', messages: message.messages },
      keyHeader: 'x-api-key',
    });
    // The demo has no Anthropic-family service, so the direct adapter's Messages routes refuse demo/echo.
    await call('POST', '/api/adapters/chatapi-direct/v1/messages', {
      body: { ...message, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
      keyHeader: 'x-api-key',
    });
    await call('POST', '/api/adapters/chatapi-direct/v1/messages/count_tokens', {
      body: { model: 'demo/echo', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
      bearer: true,
    });
    await call('POST', '/api/adapters/chatapi-direct/v1/messages', { body: message, key: null });

    await call('GET', '/metrics', { key: null });
    await call('GET', '/metrics', { key: 'demo-metrics-token-0123456789', bearer: true });
    await call('GET', `${A}/usage`);
    await call('GET', `${A}/usage?from=2026-01-01&to=2026-01-31`);
    await call('GET', `${A}/usage?from=2026-02-01&to=2026-01-01`);
    await call('GET', '/api/platformgateway/account/nobody/usage');

    await call('POST', '/api/adapters/chatapi/v1/audio/speech', { body: { model: 'demo/tts', input: 'hi' }, bearer: true });
    const form = new FormData();
    form.set('model', 'demo/asr');
    form.set('file', new Blob([Buffer.alloc(10)], { type: 'audio/wav' }), 'x.wav');
    await call('POST', '/api/adapters/chatapi/v1/audio/transcriptions', { raw: form, bearer: true });

    const dataset = await call('POST', `${G}/dataset`, {
      body: {
        name: 'reviews',
        content: [
          { text: 'good', label: 'positive' },
          { text: 'bad', label: 'negative' },
        ],
      },
    });
    const datasetId = ((await dataset.json()) as any).id.datasetId as number;
    await call('POST', `${G}/dataset/raw?name=raw-reviews`, { raw: 'good\tpositive\n', type: 'text/plain' });
    await call('GET', `${G}/dataset`);
    await call('GET', `${G}/dataset/${datasetId}`);
    await call('GET', `${G}/dataset/${datasetId}/content`);
    await call('POST', `${G}/model/text-classifier/derived`, { body: { name: 'sentiment' } });
    await call('GET', `${G}/model/text-classifier/fit-config`);
    const job = await call('POST', `${G}/model/sentiment/fit`, { body: { datasetId } });
    const jobId = ((await job.json()) as any).jobId as string;
    await eventually(
      async () => ((await (await fetch(`${base}${G}/job/${jobId}`, { headers: { 'PLATFORM-API-KEY': KEY } })).json()) as any).done === true,
      10_000,
      'the fit',
    );
    await call('GET', `${G}/job`);
    await call('GET', `${G}/job/${jobId}`);
    await call('POST', `${G}/job/${jobId}/cancel`);
    await call('GET', `${G}/derived`);
    await call('GET', `${G}/derived/sentiment`);
    await call('DELETE', `${G}/derived/sentiment`);
    await call('DELETE', `${G}/dataset/${datasetId}`);

    // The user space, signed in as the demo's person (owner of demo and operator).
    const U = '/api/platformcore';
    await call('POST', `${U}/auth/login`, { key: null, body: { email: 'demo@example.com', password: 'wrong-password' } });
    const login = await call('POST', `${U}/auth/login`, { key: null, body: { email: 'demo@example.com', password: 'demo-password-123' } });
    const cookie = /gw_session=[^;]*/.exec(login.headers.get('set-cookie') ?? '')![0];
    const session = { key: null, headers: { cookie, 'x-csrf-token': ((await login.json()) as any).csrfToken as string } };
    await call('GET', `${U}/auth/me`, session);
    await call('GET', `${U}/auth/me`, { key: null });
    await call('GET', `${U}/auth/session`, session);
    await call('PUT', `${U}/auth/session`, { ...session, body: { account: 'demo' } });
    await call('PUT', `${U}/auth/session`, { ...session, body: { account: 'no-such-account' } });
    const sessions = ((await (await call('GET', `${U}/auth/sessions`, session)).json()) as any).sessions as {
      id: string;
      current: boolean;
    }[];
    await call('POST', `${U}/auth/setup`, {
      key: null,
      body: { token: 'not-the-token', email: 'x@example.com', password: 'password-123' },
    });
    await call('GET', `${U}/accounts`, session);
    await call('POST', `${U}/accounts`, { ...session, body: { name: `tour-${Date.now()}`, displayName: 'Tour' } });
    await call('POST', `${U}/accounts`, { ...session, body: { name: 'demo' } });
    await call('GET', `${U}/accounts/demo`, session);
    await call('PATCH', `${U}/accounts/demo`, { ...session, body: { displayName: 'Demo' } });
    await call('GET', `${U}/account/demo/members`, session);
    const member = await call('POST', `${U}/account/demo/members`, {
      ...session,
      body: { email: 'tour@example.com', role: 'viewer', password: 'tour-password-1' },
    });
    const userId = ((await member.json()) as any).userId as string;
    await call('PATCH', `${U}/account/demo/members/${userId}`, { ...session, body: { role: 'developer' } });
    await call('DELETE', `${U}/account/demo/members/${userId}`, session);
    await call('GET', `${U}/account/demo/services`, session);
    const serviceName = `tour-engine-${Date.now()}`;
    await call('POST', `${U}/account/demo/services`, {
      ...session,
      body: { name: serviceName, upstream: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } },
    });
    await call('POST', `${U}/account/demo/services`, { ...session, body: { name: 'echo' } });
    await call('GET', `${U}/account/demo/services/${serviceName}`, session);
    await call('PATCH', `${U}/account/demo/services/${serviceName}`, { ...session, body: { public: true, newConnectionToken: true } });
    await call('PATCH', `${U}/account/demo/services/echo`, { ...session, body: { public: false } });
    await call('DELETE', `${U}/account/demo/services/${serviceName}`, session);
    await call('GET', `${U}/account/demo/api-keys`, session);
    const key = (
      (await (
        await call('POST', `${U}/account/demo/api-keys`, {
          ...session,
          body: { name: 'tour', permissions: ['READ_DATA'], budgets: [{ unit: 'tokens', limit: 1000, period: 'day' }] },
        })
      ).json()) as any
    ).id as string;
    await call('POST', `${U}/account/demo/api-keys`, { ...session, body: { name: 'tour', permissions: ['NOPE'] } });
    await call('GET', `${U}/account/demo/api-keys/${key}`, session);
    await call('PATCH', `${U}/account/demo/api-keys/${key}`, { ...session, body: { name: 'tour-renamed', expiresAt: null } });
    await call('POST', `${U}/account/demo/api-keys/${key}/rotate`, { ...session, body: { gracePeriodSeconds: 60 } });
    await call('DELETE', `${U}/account/demo/api-keys/${key}`, session);
    await call('GET', `${U}/account/demo/usage?groupBy=day,model,key,service`, session);
    await call('DELETE', `${U}/auth/sessions/no-such-session`, session);
    await call('POST', `${U}/auth/logout`, session);
    expect(sessions.some((s) => s.current)).toBe(true);

    expect(problems).toEqual([]);
    expect(operations.filter((o) => !exercised.has(o)).map((o) => `${o.method} ${o.path}`)).toEqual([]);
  }, 60_000);

  it('documents every route the enabled plugins registered', () => {
    const documented = new Set(operations.map((o) => routeKey(o.method, o.path)));
    const registered = gateway.plugins.flatMap(({ definition, router }) =>
      // The alias prefix's catch-all (a 404 with a hint) is no operation.
      (router?.stack ?? [])
        .filter((layer) => layer.path !== '/v1{/*rest}')
        .flatMap((layer) =>
          layer.methods.filter((m) => m !== 'HEAD').map((m) => ({ plugin: definition.name, key: routeKey(m, String(layer.path)) })),
        ),
    );
    expect(registered.length).toBeGreaterThan(0);
    expect(registered.filter((r) => !documented.has(r.key)).map((r) => `${r.key} (${r.plugin})`)).toEqual([]);
  });

  it("the served document has the enabled plugins' paths, this gateway as server, and no external refs", async () => {
    const served = (await (await fetch(`${base}/openapi.json`)).json()) as Record<string, any>;
    expect(served.openapi).toBe('3.1.0');
    expect(served.servers).toEqual([{ url: base }]);
    expect(Object.keys(served.paths)).toEqual(Object.keys(document.paths));
    expect(JSON.stringify(served)).not.toMatch(/"\$ref":"\.\//);
  });

  // A strict validator (the OpenAPI 3.1 schema and the spec's rules: response codes, unique
  // operationIds, path parameters), as code generators and API tools read the document. A YAML flow
  // map with an unquoted comma (`{ description: Deleted, with its files }`) made a second key, which
  // it rejects as a response code.
  it('the served /openapi.json and the whole document pass a strict OpenAPI validator', async () => {
    const served = (await (await fetch(`${base}/openapi.json`)).json()) as Parameters<typeof SwaggerParser.validate>[0];
    await expect(SwaggerParser.validate(served)).resolves.toBeTruthy();
    await expect(SwaggerParser.validate(structuredClone(document) as unknown as typeof served)).resolves.toBeTruthy();
  });
});
