import type Router from '@koa/router';
import type { GatewayConfig } from '../config/types.js';
import type { Directory } from '../admission/directory.js';
import type { Gate } from '../gate/gate.js';
import type { Admission } from '../admission/http-middleware.js';
import type { HttpHelpers } from '../http/helpers.js';
import type { Logger } from '../observe/logger.js';
import type { GatewayEvents } from '../observe/events.js';
import type { Readiness } from '../observe/readiness.js';
import type { Pipeline } from '../admission/pipeline.js';
import type { Storage } from '../storage/storage.js';
import type { TaskStore } from '../tasks/task-store.js';
import type { Registry } from '../registry/registry.js';
import type { DataTypes } from '../specs/data-types.js';
import type { UserSpace } from '../userspace/user-space.js';

/**
 * What a plugin receives: a narrow view of the gateway, not the app. `options` are the plugin's own
 * settings from `plugins.options.<name>`, validated against its `configSchema` with defaults applied.
 */
export interface PluginContext<Options = Record<string, unknown>> {
  readonly name: string;
  readonly options: Options;
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly pipeline: Pipeline;
  readonly directory: Directory;
  readonly gate: Gate;
  /** Async tasks and their results (in-memory or MongoDB, per config): `storage.tasks`. */
  readonly store: TaskStore;
  /** The gateway's storage, opened once; a plugin with state of its own opens its store here. */
  readonly storage: Storage;
  readonly http: HttpHelpers;
  /** Admission middleware of the platform API (`PLATFORM-API-KEY`, permissions, rate limit, own account, service). */
  readonly admission: Admission;
  /** Base URL of the published data-type schemas (`{specs_url}`). */
  readonly specsUrl: string;
  /** The model registry (read-only); config validation against it runs in `pipeline.validateConfig`. */
  readonly registry: Registry;
  /** The published data-type schemas and the check of a request's data against its `dataType`. */
  readonly dataTypes: DataTypes;
  /** What the gateway reports about its traffic (requests, service calls, usage, charges); observers subscribe. */
  readonly events: GatewayEvents;
  /** Whether the gateway is ready for traffic, and why not (for health endpoints). */
  readonly readiness: Readiness;
  /** Run-time accounts, people, keys and services on the gateway's store; opened by `userSpace.start()`. */
  readonly userSpace: UserSpace;
}

/**
 * One gateway's running plugin: what `create` returns. Its state lives in the instance (or the
 * closure that made it), so two gateways in one process never share it.
 */
export interface PluginInstance {
  /** Mounts the plugin's routes on its own router. */
  routes?(router: Router): void;
  /** Background work started after the routes are mounted and before the gateway listens (workers, timers, stores). */
  start?(): Promise<void> | void;
  /** Stops background work and closes what `start` opened; called in reverse load order at shutdown. */
  stop?(): Promise<void> | void;
}

export interface PluginDefinition<Options = Record<string, unknown>> {
  /** Unique name; for a built-in plugin, the name of its folder under plugins/. */
  readonly name: string;
  readonly description?: string;
  /** JSON Schema of the plugin's options (`plugins.options.<name>`); defaults are applied. */
  readonly configSchema?: Record<string, unknown>;
  /**
   * Creates the plugin's instance for one gateway (a plugin with state of its own: workers, stores,
   * counters). Called once per gateway, before its routes are mounted. A plugin defines either
   * `create` or the stateless hooks below, not both.
   */
  create?(ctx: PluginContext<Options>): PluginInstance;
  /** Mounts the plugin's routes on its own router (a plugin without `create`). */
  routes?(router: Router, ctx: PluginContext<Options>): void;
  /** Background work started after the routes are mounted and before the gateway listens (a plugin without `create`). */
  start?(ctx: PluginContext<Options>): Promise<void> | void;
  /** Stops background work at shutdown, with the context `start` got (a plugin without `create`). */
  close?(ctx: PluginContext<Options>): Promise<void> | void;
}

/**
 * Declares a plugin. An identity function that exists for typing.
 *
 * @example
 * // Stateless: hooks that receive the context.
 * export default definePlugin({
 *   name: 'hello',
 *   routes(router) {
 *     router.get('/hello', (ctx) => { ctx.body = { hello: 'world' }; });
 *   },
 * });
 *
 * @example
 * // With state: one instance per gateway.
 * export default definePlugin({
 *   name: 'counter',
 *   create(ctx) {
 *     let hits = 0;
 *     return {
 *       routes(router) { router.get('/hits', (koa) => { koa.body = { hits: ++hits }; }); },
 *     };
 *   },
 * });
 */
export function definePlugin<Options = Record<string, unknown>>(definition: PluginDefinition<Options>): PluginDefinition<Options> {
  return definition;
}

/** The instance of a plugin for one gateway: its own from `create`, or its stateless hooks bound to the context. */
export function instantiatePlugin<Options>(definition: PluginDefinition<Options>, ctx: PluginContext<Options>): PluginInstance {
  if (definition.create) return definition.create(ctx);
  const { routes, start, close } = definition;
  return {
    ...(routes ? { routes: (router: Router) => routes.call(definition, router, ctx) } : {}),
    ...(start ? { start: () => start.call(definition, ctx) } : {}),
    ...(close ? { stop: () => close.call(definition, ctx) } : {}),
  };
}
