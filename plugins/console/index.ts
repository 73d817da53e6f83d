import type { Context } from 'koa';
import { definePlugin, gatewayError } from '../../core/plugins/index.js';
import { defaultRoot, loadAssets, type Asset } from './assets.js';
import { SECURITY_HEADERS } from './headers.js';

interface ConsoleOptions {
  /** The folder of the built console; default: what `npm run build` wrote (dist/plugins/console/public). */
  root?: string;
}

const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    root: { type: 'string', minLength: 1, description: 'Folder of the built console (default: the one `npm run build` writes)' },
  },
} as const;

/**
 * The console (docs/console.md): a single-page application at `/console`, built by `npm run build`
 * from console/ and served here with its security headers. It has no server logic: every page calls
 * the user-space API and the platform API, which authorize each call themselves. A path without a
 * file (`/console/keys`) answers the application's page, whose router shows the right view.
 */
export default definePlugin<ConsoleOptions>({
  name: 'console',
  description: 'GET /console: the console (sign-in, API tokens, services, fitted services, tasks, usage, playground, members, accounts)',
  configSchema,
  create(ctx) {
    const root = ctx.options.root ?? defaultRoot();
    const assets = loadAssets(root);
    return {
      routes(router) {
        // `/console` also matches `/console/` (routes are not strict about a trailing slash).
        router.get('/console', (koa) => {
          // The application's relative links resolve under /console/.
          if (koa.path === '/console') return koa.redirect('/console/');
          serve(koa, assets, '');
        });
        router.get('/console/*path', (koa) => serve(koa, assets, pathOf(koa.params.path)));
      },
      start() {
        if (!assets.has('index.html')) ctx.logger.warn({ root }, 'the console is not built (run npm run build): /console answers 404');
      },
    };
  },
});

/** The wildcard's value: @koa/router hands it joined, or as segments. */
const pathOf = (value: unknown): string => (Array.isArray(value) ? value.join('/') : typeof value === 'string' ? value : '');

function serve(koa: Context, assets: Map<string, Asset>, path: string): void {
  const file = assets.get(path);
  // A path with an extension names a file: a missing one is a 404, not the application's page.
  const asset = file ?? (/\.[a-z0-9]+$/i.test(path) ? undefined : assets.get('index.html'));
  if (!asset) {
    throw gatewayError('NOT_FOUND', {
      args: {
        method: koa.method,
        path: koa.path,
        hint: assets.size ? 'no such console file' : 'the console is not built: run npm run build',
      },
    });
  }
  koa.set(SECURITY_HEADERS);
  koa.set('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  koa.set('ETag', asset.etag);
  if (koa.get('if-none-match') === asset.etag) {
    koa.status = 304;
    return;
  }
  koa.type = asset.type;
  koa.body = asset.body;
}
