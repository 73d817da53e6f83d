import type { Context } from 'koa';
import { answerBody, type ServiceResponse } from '../../core/plugins/index.js';

/**
 * Writes a service's answer (core/gate/answer.ts gathered it and filtered its headers) as it came:
 * its JSON text with `application/json` (not parsed and re-serialised), protobuf bytes as
 * `application/octet-stream`, its status code and its headers (a Content-Type of its own wins).
 */
export function writeAnswer(ctx: Context, answer: ServiceResponse): void {
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.status = answer.status ?? 200;
  const ownType = Boolean(ctx.response.get('Content-Type'));
  const body = answerBody(answer);
  if (!body) {
    ctx.body = '';
    if (!ownType) ctx.remove('Content-Type');
  } else if ('json' in body) {
    if (!ownType) ctx.type = 'application/json';
    ctx.body = body.json;
  } else {
    if (!ownType) ctx.type = 'application/octet-stream';
    ctx.body = body.protobuf;
  }
}
