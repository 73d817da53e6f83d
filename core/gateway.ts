import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { GatewayConfig } from './config/types.js';
import { Directory } from './directory.js';
import { BootError } from './errors.js';
import { ClientCalls } from './gate/client-calls.js';
import { Gate } from './gate/gate.js';
import { startGrpcServer, type RunningGrpcServer, type SpeechHandlers } from './gate/grpc-server.js';
import { createHttpApp } from './http/app.js';
import { HttpDrain } from './http/drain.js';
import { createHttpHelpers } from './http/helpers.js';
import { GatewayEvents } from './observe/events.js';
import { Readiness } from './observe/readiness.js';
import { createLogger, type Logger } from './logger.js';
import { Pipeline } from './pipeline.js';
import { loadPlugins, type LoadedPlugin } from './plugins/loader.js';
import { SharedRateLimiter } from './limits/shared-rate-limiter.js';
import { RateLimiter, type RequestLimiter } from './rate-limiter.js';
import { MongoTaskStore } from './tasks/mongo-task-store.js';
import { createTaskStore } from './tasks/create-task-store.js';
import type { TaskStore } from './tasks/task-store.js';
import { createRegistry, type Registry } from './registry/registry.js';
import { DataTypes } from './specs/data-types.js';
import { createGrpcSpeechHandlers } from './speech/grpc-speech.js';
import type { SpeechLimits } from './speech/limits.js';
import { SpeechBridge } from './speech/speech-bridge.js';

export interface GatewayOptions {
  logger?: Logger;
  /** Replaces the gRPC speech calls (processSynthesis, processRecognition); default: core/speech. */
  speech?: SpeechHandlers;
  /** Bounds of the default gRPC speech calls (buffered bytes for a slow caller, text length, rates). */
  speechLimits?: Partial<SpeechLimits>;
}

export interface Gateway {
  readonly config: GatewayConfig;
  readonly app: Koa;
  readonly gate: Gate;
  readonly pipeline: Pipeline;
  readonly directory: Directory;
  readonly store: TaskStore;
  readonly registry: Registry;
  readonly dataTypes: DataTypes;
  readonly logger: Logger;
  readonly plugins: readonly LoadedPlugin[];
  readonly events: GatewayEvents;
  readonly readiness: Readiness;
  /** Listens for HTTP and gRPC (port 0 picks free ports) and starts the plugins' background work. */
  start(): Promise<{ httpPort: number; grpcPort: number; httpUrl: string; grpcAddress: string }>;
  /**
   * Stops in order: refuse new requests (readiness answers 503, other new HTTP requests get 503
   * with `Connection: close`, services get `stopServing`), let those in flight finish within
   * `gate.drainTimeoutMs`, stop plugins, close listeners, close the store.
   */
  close(): Promise<void>;
}

/** Builds a gateway from a validated config: the core parts, then the enabled plugins. */
export async function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger();
  const events = new GatewayEvents();
  events.onListenerError = (err, event) => logger.warn({ err, event }, 'an event listener failed');
  const directory = new Directory(config);
  const store = await createTaskStore(config.store, logger);
  const rateLimiter = await createRateLimiter(config, store, logger);
  const pipeline = new Pipeline(directory, rateLimiter);
  const registry = createRegistry(config);
  pipeline.addValidator(registry);
  const gate = new Gate(directory, config.gate, logger, events);
  const clientCalls = new ClientCalls(pipeline, gate, logger, events);
  const speech = options.speech ?? createGrpcSpeechHandlers({ pipeline, bridge: new SpeechBridge(gate, options.speechLimits), logger });
  const app = createHttpApp(logger, events, config.server.accessLog);
  const drain = new HttpDrain();
  app.use(drain.middleware);
  const http = createHttpHelpers(config.server.bodyLimitBytes, events);
  let httpServer: Server | undefined;
  let grpcServer: RunningGrpcServer | undefined;
  let started = false;
  let running = false;
  const readiness = new Readiness({
    started: () => running,
    draining: () => drain.draining,
    pingStore: () => store.ping(),
  });
  let specsUrl = `${publicUrl(config, config.server.httpPort)}/specs`;
  const dataTypes = new DataTypes(() => specsUrl);

  const plugins = await loadPlugins(app, config.plugins, (name, pluginOptions) => ({
    name,
    options: pluginOptions,
    config,
    logger: logger.child({ plugin: name }),
    pipeline,
    directory,
    gate,
    store,
    http,
    get specsUrl() {
      return specsUrl;
    },
    registry,
    dataTypes,
    events,
    readiness,
  }));

  return {
    config,
    app,
    gate,
    pipeline,
    directory,
    store,
    registry,
    dataTypes,
    logger,
    plugins,
    events,
    readiness,
    async start() {
      if (started) throw new Error('gateway already started');
      started = true;
      const { host } = config.server;
      httpServer = app.listen(config.server.httpPort, host);
      // Long-lived streams (SSE, audio) must not be cut by Node's default request timeout.
      httpServer.requestTimeout = 0;
      await once(httpServer, 'listening');
      const httpPort = (httpServer.address() as AddressInfo).port;
      specsUrl = `${publicUrl(config, httpPort)}/specs`;
      grpcServer = await startGrpcServer({
        host,
        port: config.server.grpcPort,
        maxMessageBytes: config.server.grpcMaxMessageBytes,
        heartbeatIntervalMs: config.gate.heartbeatIntervalMs,
        gate,
        clientCalls,
        speech,
      });
      for (const plugin of plugins) {
        try {
          await plugin.definition.start?.(plugin.context);
        } catch (err) {
          throw new BootError('PLUGIN_START_FAILED', `plugin '${plugin.definition.name}' failed to start: ${(err as Error).message}`, [], err);
        }
      }
      running = true;
      const result = { httpPort, grpcPort: grpcServer.port, httpUrl: `http://${host}:${httpPort}`, grpcAddress: `${host}:${grpcServer.port}` };
      logger.info({ ...result, plugins: plugins.map((p) => p.definition.name) }, 'gateway listening');
      return result;
    },
    async close() {
      running = false;
      // The listener stays open while draining so that probes see `/health/ready` answer 503; every
      // other new request gets 503 GATE_IS_SHUT_DOWN with `Connection: close` (HttpDrain).
      const deadline = Date.now() + config.gate.drainTimeoutMs;
      await Promise.all([drain.drain(deadline), gate.shutdown()]);
      for (const plugin of [...plugins].reverse()) {
        try {
          await plugin.definition.close?.(plugin.context);
        } catch (err) {
          logger.warn({ err, plugin: plugin.definition.name }, 'plugin close failed');
        }
      }
      await grpcServer?.close();
      rateLimiter.close?.();
      await store.close();
      if (httpServer) {
        httpServer.closeAllConnections();
        await new Promise<void>((resolve) => httpServer!.close(() => resolve()));
      }
    },
  };
}

/**
 * With MongoDB (and `limits.shared`, the default), the per-account rate holds across every gateway
 * on the database; otherwise each gateway counts on its own.
 */
async function createRateLimiter(config: GatewayConfig, store: TaskStore, logger: Logger): Promise<RequestLimiter> {
  if (!config.limits.shared || !(store instanceof MongoTaskStore)) return new RateLimiter();
  return SharedRateLimiter.open(store.model.db, logger);
}

function publicUrl(config: GatewayConfig, httpPort: number): string {
  return (config.server.publicUrl ?? `http://${config.server.host}:${httpPort}`).replace(/\/$/, '');
}
