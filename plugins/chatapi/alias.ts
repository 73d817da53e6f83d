/**
 * The adapter under a second, shorter prefix (`aliasPrefix`, e.g. `/v1`), so the base URL a user
 * guesses works: `OPENAI_BASE_URL=http://host:8080/v1` reaches `…/v1/chat/completions`, and an
 * Anthropic SDK or Claude Code with `ANTHROPIC_BASE_URL=http://host:8080` reaches `/v1/messages`.
 * A path under the prefix that the adapter does not serve answers 404 naming what it does serve.
 */
import type Router from '@koa/router';
import { gatewayError } from '../../core/plugins/index.js';

const SERVED = 'POST chat/completions, completions, embeddings, responses, messages, messages/count_tokens; GET models, responses/{id}';

/** The route patterns of `path`: under the adapter base (`base` + `infix`) and under the alias prefix. */
export function routePaths(base: string, infix: string, aliasPrefix: string | undefined): (path: string) => string[] {
  return (path) => [`${base}${infix}/${path}`, ...(aliasPrefix ? [`${aliasPrefix}/${path}`] : [])];
}

/** Mounted after every route of the adapter: what reaches it under the prefix matched none. */
export function mountAliasHint(router: Router, aliasPrefix: string | undefined): void {
  if (!aliasPrefix) return;
  router.all(`${aliasPrefix}{/*rest}`, (koa) => {
    throw gatewayError('NOT_FOUND', {
      args: {
        method: koa.method,
        path: koa.path,
        hint: `${aliasPrefix} serves the OpenAI and Anthropic APIs: ${SERVED}; GET ${aliasPrefix}/models lists the models this key may call`,
      },
    });
  });
}
