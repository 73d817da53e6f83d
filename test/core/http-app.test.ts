import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../core/http/app.js';
import { createHttpHelpers } from '../../core/http/helpers.js';
import { gatewayError } from '../../core/errors.js';
import { silentLogger } from '../../core/observe/logger.js';

function app() {
  const koa = createHttpApp(silentLogger());
  const http = createHttpHelpers(2048);
  koa.use(async (ctx) => {
    if (ctx.path === '/json') ctx.body = { got: await http.readJson(ctx) };
    else if (ctx.path === '/coded') throw gatewayError('TOKEN_PERMISSION_REQUIRED', { args: { permission: 'READ_DATA' } });
    else if (ctx.path === '/boom') throw new Error('secret internals');
  });
  return koa.callback();
}

describe('HTTP core', () => {
  it('puts an x-request-id on every response, keeping a sane one from the caller', async () => {
    const generated = await request(app()).get('/nothing');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const given = await request(app()).get('/nothing').set('x-request-id', 'abc-123');
    expect(given.headers['x-request-id']).toBe('abc-123');
    const hostile = await request(app()).get('/nothing').set('x-request-id', 'a b\tc');
    expect(hostile.headers['x-request-id']).not.toBe('a b\tc');
  });

  it('renders catalog errors in the one envelope, with x-should-retry: false when retrying cannot help', async () => {
    const res = await request(app()).get('/coded');
    expect(res.status).toBe(403);
    expect(res.headers['x-should-retry']).toBe('false');
    expect(res.body).toEqual({
      error: {
        code: 'TOKEN_PERMISSION_REQUIRED',
        message: 'The API key lacks the READ_DATA permission',
        type: 'permission_error',
        param: null,
        args: { permission: 'READ_DATA' },
      },
    });
  });

  it('hides the message of unexpected errors', async () => {
    const res = await request(app()).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'INTERNAL_ERROR', message: 'Internal gateway error', type: 'api_error' });
    expect(JSON.stringify(res.body)).not.toContain('secret internals');
  });

  it('answers unknown routes with 404 NOT_FOUND', async () => {
    const res = await request(app()).get('/nothing');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  it('rejects malformed JSON with 400 and oversized bodies with 413', async () => {
    const bad = await request(app()).post('/json').set('content-type', 'application/json').send('{"a":');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('MALFORMED_JSON');
    const big = await request(app())
      .post('/json')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ a: 'x'.repeat(4096) }));
    expect(big.status).toBe(413);
    expect(big.body.error).toMatchObject({ code: 'REQUEST_TOO_LARGE', args: { limit: '2048' } });
    const ok = await request(app()).post('/json').send({ a: 1 });
    expect(ok.body).toEqual({ got: { a: 1 } });
  });
});
