import type { Context } from 'koa';
import { streamDeadlines, type ChatAdapterOptions } from './options.js';
import {
  GatewayError,
  type Caller,
  type GateRequest,
  type OpenOptions,
  type PluginContext,
  type ServiceCall,
  type ServiceEntry,
} from '../../../core/plugins/index.js';
import { asOutage } from './outage.js';

/** Where a chat request may go besides its service's least busy instance (core/gate/routing.ts, failover.ts). */
export type ChatRouting = Pick<OpenOptions, 'fallbacks' | 'model' | 'affinityKey'>;

/**
 * Opens a call to a chat service for an adapter request, cancelled when the caller goes away. A
 * service with no connected instance is 503 SERVICE_UNAVAILABLE with `Retry-After` here, which the
 * OpenAI and Anthropic SDKs retry (docs/design.md, decisions), as is an engine that cannot be reached
 * (outage.ts; the relays map the call's failure); the platform API keeps the spec's 400.
 * `stream`: the call has no overall deadline; the call enforces the adapter's first-chunk and idle
 * deadlines instead (`firstChunkTimeoutMs`, `idleTimeoutMs`), so the relays arm no timers.
 * With `waitForInstanceMs`, a service with no instance is waited for (and woken) first.
 * `extraHeaders` go to the service too (e.g. `anthropic-version`), after the gateway's own.
 * A streamed call holds one of the account's concurrent-stream slots until its response closes
 * (end, error or the caller going away), like gRPC streams and HTTP speech: an SSE stream holds an
 * instance's attention as long as the caller likes. The slot is taken first, so a refused caller
 * (429 TOO_MANY_CONCURRENT_STREAMS) neither waits for nor wakes an instance.
 */
export async function openChatCall(
  ctx: PluginContext<any>,
  koa: Context,
  caller: Caller,
  service: ServiceEntry,
  request: GateRequest,
  stream: boolean,
  extraHeaders?: Record<string, string>,
  routing: ChatRouting = {},
): Promise<ServiceCall> {
  let call: ServiceCall;
  if (stream) koa.res.once('close', ctx.pipeline.openStream(caller));
  const context = ctx.http.callContext(koa, caller, service);
  if (extraHeaders) for (const [name, value] of Object.entries(extraHeaders)) context.headers[name] ??= value;
  // The caller leaving ends a wait for an instance (and frees its place among the account's waiters).
  if (!routing.fallbacks?.length) await ctx.gate.ready(service, caller.account, () => ctx.http.closeSignal(koa));
  try {
    const deadlines = stream ? streamDeadlines(ctx.options as ChatAdapterOptions, service, ctx.gate.defaultTimeoutSec) : {};
    call = ctx.gate.open(service, request, { context, timeoutMs: stream ? 0 : undefined, ...deadlines, ...routing });
  } catch (err) {
    throw err instanceof GatewayError ? asOutage(err, service.name) : err;
  }
  ctx.http.cancelOnClose(koa, call);
  return call;
}
