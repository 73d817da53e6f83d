/**
 * What the gateway keeps in a request's `ctx.state`, typed once for core and plugins alike (Koa's
 * `DefaultState` is widened here, so `ctx.state.caller` is a `Caller | undefined` everywhere, with no
 * cast). Each member is written in one place: `requestId`, `record` and `errorRenderer` by the HTTP
 * app (core/http/app.ts), `plugin` by the plugin's router (core/plugins/mount-router.ts), `caller` and
 * `service` by admission (core/admission/http-middleware.ts).
 */
import type { Caller, ServiceEntry } from '../admission/directory.js';
import type { GatewayError } from '../errors.js';
import type { RequestRecord } from '../observe/request-record.js';

/** Renders an error body in a route's own wire shape (e.g. Anthropic's on the Messages API routes). */
export type ErrorRenderer = (err: GatewayError, requestId: string) => unknown;

export interface GatewayState {
  /** The request's ID (the caller's sane `x-request-id`, else a new UUID); on every response. */
  requestId: string;
  /** The access log's record of the request. */
  record: RequestRecord;
  /** The plugin whose router matched the request, for the access log and metrics. */
  plugin?: string;
  /** The route's own error shape, when it chose one (`useErrorRenderer`). */
  errorRenderer?: ErrorRenderer;
  /** The admitted caller: set by admission before any handler runs. */
  caller?: Caller;
  /** The service the request addresses, once admission resolved and admitted it. */
  service?: ServiceEntry;
}

declare module 'koa' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface DefaultState extends GatewayState {}
}
