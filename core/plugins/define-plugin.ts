import type Router from '@koa/router';
import type { GatewayConfig } from '../config/types.js';
import type { Directory } from '../directory.js';
import type { Gate } from '../gate/gate.js';
import type { Admission } from '../http/admission.js';
import type { HttpHelpers } from '../http/helpers.js';
import type { Logger } from '../logger.js';
import type { GatewayEvents } from '../observe/events.js';
import type { Readiness } from '../observe/readiness.js';
import type { Pipeline } from '../pipeline.js';
import type { Storage } from '../storage/storage.js';
import type { TaskStore } from '../tasks/task-store.js';
import type { Registry } from '../registry/registry.js';
import type { DataTypes } from '../specs/data-types.js';

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
}

export interface PluginDefinition<Options = Record<string, unknown>> {
  /** Unique name; for a built-in plugin, the name of its folder under plugins/. */
  readonly name: string;
  readonly description?: string;
  /** JSON Schema of the plugin's options (`plugins.options.<name>`); defaults are applied. */
  readonly configSchema?: Record<string, unknown>;
  /** Mounts the plugin's routes on its own router. */
  routes?(router: Router, ctx: PluginContext<Options>): void;
  /** Background work started after the routes are mounted and before the gateway listens (workers, timers). */
  start?(ctx: PluginContext<Options>): Promise<void> | void;
  /**
   * Stops background work; called in reverse load order at shutdown, with the context `start` got
   * (one process may run several gateways, each with its own context).
   */
  close?(ctx: PluginContext<Options>): Promise<void> | void;
}

/**
 * Declares a plugin. An identity function that exists for typing.
 *
 * @example
 * export default definePlugin({
 *   name: 'hello',
 *   routes(router) {
 *     router.get('/hello', (ctx) => { ctx.body = { hello: 'world' }; });
 *   },
 * });
 */
export function definePlugin<Options = Record<string, unknown>>(definition: PluginDefinition<Options>): PluginDefinition<Options> {
  return definition;
}
