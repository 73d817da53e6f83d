import { servedByHeader, type ServiceCall } from '../../../core/plugins/index.js';
import { parseJsonObject } from './json-object.js';

/**
 * Says who answered a non-streamed chat answer: the `x-served-by` header always, and, when a
 * fallback service answered, its `<author>/<service>[/model]` as the answer's `model` (docs/routing.md).
 * Streamed answers carry the header only: their chunks pass through untouched.
 */
export function markServedBy(koa: { set(name: string, value: string): void }, call: ServiceCall, json: string): string {
  const served = call.servedBy;
  if (!served) return json;
  koa.set('x-served-by', servedByHeader(served));
  if (!served.fallback) return json;
  const answer = parseJsonObject(json);
  if (!answer) return json;
  answer.model = served.name;
  return JSON.stringify(answer);
}
