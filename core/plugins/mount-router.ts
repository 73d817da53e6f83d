import type Router from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';

/** Characters that start something other than literal text in a route path (path-to-regexp v8). */
const NOT_LITERAL = /[:*{}()[\]?+!\\]/;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * A test for the paths `router` could match: the literal start of each of its routes, or null when
 * one of them could match any path (a parameter or wildcard first, a RegExp, a path-less `use`).
 */
function pathFilter(router: Router): RegExp | null {
  const prefixes = new Set<string>();
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string') return null;
    const literal = layer.path.split(NOT_LITERAL, 1)[0]!;
    if (literal === '' || literal === '/') return null;
    prefixes.add(literal);
  }
  const flags = (router.opts as { sensitive?: boolean }).sensitive ? '' : 'i';
  return new RegExp(`^(?:${[...prefixes].map(escape).join('|')})`, flags);
}

/**
 * Mounts a plugin's router (its routes, then its 405/501 answers) so that requests for paths it
 * cannot match pass it by. Each @koa/router dispatch reads the host, matches every layer and
 * records the result on the context even when nothing matches: with the demo's nine plugins that
 * was about 15 µs of every chat request, a tenth of the gateway's CPU. A router that cannot match a
 * path adds nothing to what the others answer (the 405 of a path served for other methods comes
 * from the router that has the path). The filter is rebuilt when a plugin adds routes later.
 */
export function mountPluginRouter(app: Koa, router: Router, plugin = 'none'): void {
  const routes = router.routes() as Koa.Middleware;
  const dispatch = compose([
    // Names the plugin for the access log and metrics; a later router that matches names its own.
    (ctx: Koa.Context, next: Koa.Next) => {
      ctx.state.plugin = plugin;
      return routes(ctx, next);
    },
    router.allowedMethods({ throw: true }),
  ]) as Koa.Middleware;
  let filter: RegExp | null = null;
  let layers = -1;
  app.use((ctx, next) => {
    if (layers !== router.stack.length) {
      layers = router.stack.length;
      filter = pathFilter(router);
    }
    return filter === null || filter.test(ctx.path) ? dispatch(ctx, next) : next();
  });
}
