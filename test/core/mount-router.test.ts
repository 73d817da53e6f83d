import Router from '@koa/router';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../core/http/app.js';
import { silentLogger } from '../../core/observe/logger.js';
import { mountPluginRouter } from '../../core/plugins/mount-router.js';

/** Two plugin routers mounted the way the loader does. */
function twoPlugins() {
  const app = createHttpApp(silentLogger());
  const models = new Router();
  models.get('/api/v1/:account/models/:model', (ctx) => {
    ctx.body = { account: ctx.params.account, model: ctx.params.model };
  });
  const health = new Router();
  health.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  mountPluginRouter(app, models);
  mountPluginRouter(app, health);
  return { app, health };
}

describe('mountPluginRouter', () => {
  it('routes each request to the router that has its path, case-insensitively as @koa/router does', async () => {
    const { app } = twoPlugins();
    expect((await request(app.callback()).get('/health')).body).toEqual({ status: 'ok' });
    expect((await request(app.callback()).get('/HEALTH')).status).toBe(200);
    expect((await request(app.callback()).get('/api/v1/acme/models/m1')).body).toEqual({ account: 'acme', model: 'm1' });
  });

  it('lets a path no router has fall through to NOT_FOUND, and still answers 405 and OPTIONS for a known path', async () => {
    const { app } = twoPlugins();
    const missing = await request(app.callback()).get('/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');

    const wrongMethod = await request(app.callback()).post('/health');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.error.code).toBe('METHOD_NOT_ALLOWED');

    // A method no router knows (TRACE) is the caller's mistake too: 405, not the router's 501.
    const trace = await request(app.callback()).trace('/health');
    expect(trace.status).toBe(405);
    expect(trace.body.error).toMatchObject({ code: 'METHOD_NOT_ALLOWED', message: 'Method TRACE is not allowed on /health' });

    const options = await request(app.callback()).options('/health');
    expect(options.status).toBe(200);
    expect(options.headers.allow).toContain('GET');
  });

  it('does not dispatch a path to a router that cannot match it, unless it has a path-less middleware', async () => {
    const narrow = new Router();
    narrow.get('/only/here', (ctx) => {
      ctx.body = 'here';
    });
    // A path-less middleware could apply to any path: such a router is dispatched every request.
    const everything = new Router();
    everything.use((_ctx, next) => next());
    const app = createHttpApp(silentLogger());
    mountPluginRouter(app, everything);
    mountPluginRouter(app, narrow);
    // @koa/router marks every request it dispatches (ctx.router), matched or not: the last one wins.
    app.use((ctx) => {
      ctx.body = { dispatchedBy: ctx.router === narrow ? 'narrow' : ctx.router === everything ? 'everything' : 'none' };
    });
    expect((await request(app.callback()).get('/only/here')).text).toBe('here');
    expect((await request(app.callback()).get('/elsewhere')).body).toEqual({ dispatchedBy: 'everything' });
  });

  it('serves routes a plugin declares after it was mounted', async () => {
    const { app, health } = twoPlugins();
    await request(app.callback()).get('/status').expect(404);
    health.get('/status', (ctx) => {
      ctx.body = 'ready';
    });
    await request(app.callback()).get('/status').expect(200, 'ready');
  });
});
