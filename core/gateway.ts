import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { GatewayConfig } from './config/types.js';
import { Directory } from './admission/directory.js';
import { BootError, toGatewayError } from './errors.js';
import { ClientCalls } from './grpc/client-calls.js';
import { Gate } from './gate/gate.js';
import { workerCluster, type WorkerTopology } from './gate/cluster-update.js';
import { startGrpcServer, type RunningGrpcServer, type SpeechHandlers } from './grpc/grpc-server.js';
import { createHttpApp } from './http/app.js';
import { createAdmission } from './admission/http-middleware.js';
import { HttpDrain } from './http/drain.js';
import { createHttpHelpers } from './http/helpers.js';
import { AccountInputRate } from './flow/byte-rate.js';
import { GatewayEvents } from './observe/events.js';
import { Readiness } from './observe/readiness.js';
import { traceTrust } from './observe/trace-trust.js';
import { createLogger, type Logger } from './observe/logger.js';
import { Pipeline } from './admission/pipeline.js';
import { BudgetGate, debitBudgets } from './userspace/budgets.js';
import { loadPlugins, type LoadedPlugin } from './plugins/loader.js';
import { SharedRateLimiter } from './admission/request-rate/shared-rate-limiter.js';
import { RateLimiter, type RequestLimiter } from './admission/request-rate/local-rate-limiter.js';
import { openStorage, type Storage } from './storage/storage.js';
import type { TaskStore } from './tasks/task-store.js';
import { createRegistry, type Registry } from './registry/registry.js';
import { DataTypes } from './specs/data-types.js';
import { createGrpcSpeechHandlers } from './speech/grpc-speech.js';
import { UserSpace } from './userspace/user-space.js';
import type { SpeechLimits } from './speech/limits.js';
import { SpeechBridge } from './speech/speech-bridge.js';

export interface GatewayOptions {
  logger?: Logger;
  /** Replaces the gRPC speech calls (processSynthesis, processRecognition); default: core/speech. */
  speech?: SpeechHandlers;
  /** Bounds of the default gRPC speech calls (buffered bytes for a slow caller, text length, rates). */
  speechLimits?: Partial<SpeechLimits>;
  /**
   * This process is one of `server.workers` (core/bin/workers.ts): it listens for gRPC on the shared
   * port and its own, tells services every worker's port, and names itself in `X-Gateway-Worker`.
   */
  worker?: WorkerTopology;
  /** The environment the user space's first-operator bootstrap reads (GATEWAY_ADMIN_*); default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface GatewayAddresses {
  httpPort: number;
  grpcPort: number;
  httpUrl: string;
  grpcAddress: string;
  /** A worker's own gRPC address (`server.workers` above 1). */
  workerGrpcAddress?: string;
}

export interface Gateway {
  readonly config: GatewayConfig;
  readonly app: Koa;
  readonly gate: Gate;
  readonly pipeline: Pipeline;
  readonly directory: Directory;
  /** The async task store (`storage.tasks`). */
  readonly store: TaskStore;
  /** Memory or MongoDB, opened once; plugins open their own stores on it. */
  readonly storage: Storage;
  readonly registry: Registry;
  readonly dataTypes: DataTypes;
  readonly logger: Logger;
  readonly plugins: readonly LoadedPlugin[];
  readonly events: GatewayEvents;
  readonly readiness: Readiness;
  /** Run-time accounts, people, keys and services (started by the user-space plugin). */
  readonly userSpace: UserSpace;
  /**
   * Starts the plugins' background work, then listens for gRPC and HTTP (port 0 picks free ports), so
   * no request arrives before the plugins are ready.
   */
  start(): Promise<GatewayAddresses>;
  /**
   * Stops in order: refuse new requests (readiness answers 503, other new HTTP requests get 503
   * with `Connection: close`, services get `stopServing`), let those in flight finish within
   * `gate.drainTimeoutMs`, stop plugins, close listeners, close the storage.
   */
  close(): Promise<void>;
}

/** Builds a gateway from a validated config: the core parts, then the enabled plugins. */
export async function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger();
  const events = new GatewayEvents();
  events.onListenerError = (err, event) => logger.warn({ err, event }, 'an event listener failed');
  const directory = new Directory(config);
  const storage = await openStorage(config.store, logger);
  const store = storage.tasks;
  const rateLimiter = await createRateLimiter(config, storage, logger);
  const pipeline = new Pipeline(directory, rateLimiter, config.limits);
  const budgets = await BudgetGate.open(storage.docs, logger);
  pipeline.useBudgets(budgets);
  const stopDebiting = debitBudgets(budgets, directory, events);
  const userSpace = new UserSpace(config, storage, directory, logger.child({ part: 'userSpace' }), { env: options.env });
  const registry = createRegistry(config);
  pipeline.addValidator(registry);
  pipeline.addStorageMeter((accountId) => store.storedBytes(accountId));
  const { worker } = options;
  const gate = new Gate(directory, config.gate, logger, events, config.limits, worker ? workerCluster(worker) : undefined);
  gate.checkFallbackConfigsWith(pipeline);
  // How many values one caller JSON text may hold (core/validation/json.ts).
  const jsonSize = { maxMembers: config.limits.jsonMaxMembers, maxArrayItems: config.limits.jsonMaxArrayItems };
  const clientCalls = new ClientCalls(pipeline, gate, logger, events, config.limits.jsonMaxDepth, jsonSize);
  const speech = options.speech ?? createGrpcSpeechHandlers({ pipeline, bridge: new SpeechBridge(gate, options.speechLimits), logger });
  const app = createHttpApp(logger, events, config.server.accessLog);
  if (worker) {
    // Which worker answered: for operators reading a trace, and for the test that all of them serve.
    app.use(async (ctx, next) => {
      ctx.set('X-Gateway-Worker', String(worker.index));
      await next();
    });
  }
  // The OpenTelemetry SDK loads only when traces are exported: it costs a gateway without them 0.3 s
  // of start-up and 7 MB of heap.
  const tracing = config.tracing.otlpEndpoint
    ? (await import('./observe/tracing.js')).createTracing(config.tracing, traceTrust(directory))
    : undefined;
  if (tracing) {
    app.use(tracing.middleware);
    pipeline.observeStages(tracing.stages);
    clientCalls.traceCalls(tracing.calls);
  }
  const drain = new HttpDrain();
  app.use(drain.middleware);
  // One input rate per account for HTTP bodies and gRPC client messages alike (core/flow/byte-rate.ts).
  const accountInput = new AccountInputRate(
    config.limits.inputBytesPerSecondPerAccount,
    (id) => directory.findAccount(id)?.inputBytesPerSecond,
  );
  const http = createHttpHelpers(config.server.bodyLimitBytes, events, config.limits.jsonMaxDepth, jsonSize, registry.prices, {
    accountInput,
    refusedBodyDrainBytes: config.server.refusedBodyDrainBytes,
  });
  const admission = createAdmission(pipeline);
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
    storage,
    http,
    admission,
    get specsUrl() {
      return specsUrl;
    },
    registry,
    dataTypes,
    events,
    readiness,
    userSpace,
  }));

  return {
    config,
    app,
    gate,
    pipeline,
    directory,
    store,
    storage,
    registry,
    dataTypes,
    logger,
    plugins,
    events,
    readiness,
    userSpace,
    async start() {
      if (started) throw new Error('gateway already started');
      started = true;
      const { host } = config.server;
      for (const plugin of plugins) {
        try {
          await plugin.instance.start?.();
        } catch (err) {
          throw new BootError(
            'PLUGIN_START_FAILED',
            `plugin '${plugin.definition.name}' failed to start: ${(err as Error).message}`,
            [],
            err,
          );
        }
      }
      const grpcPort = worker?.sharedPort ?? config.server.grpcPort;
      const ownPort = worker?.ownPorts[worker.index];
      try {
        grpcServer = await startGrpcServer({
          host,
          port: grpcPort,
          ...(ownPort !== undefined ? { ownPort } : {}),
          maxMessageBytes: config.server.grpcMaxMessageBytes,
          client: {
            maxMessageBytes: config.server.grpcClientMaxMessageBytes,
            maxHeaders: config.server.grpcClientMaxHeaders,
            maxHeaderBytes: config.server.grpcClientMaxHeaderBytes,
            maxExtParams: config.limits.extMaxParams,
            maxExtParamBytes: config.limits.extMaxParamBytes,
          },
          registrationMaxMessageBytes: config.server.grpcRegistrationMaxMessageBytes,
          unauthenticatedBytesInFlight: config.server.unauthenticatedBytesInFlight,
          unauthenticatedBytesPerSecond: config.server.unauthenticatedBytesPerSecond,
          unauthenticatedCalls: config.server.unauthenticatedCalls,
          firstMessageTimeoutMs: config.server.firstMessageTimeoutMs,
          checkClientKey: (token) => {
            try {
              return { accountId: pipeline.authenticate(token, 'authToken', 'MODEL_REQUESTS').account.id };
            } catch (err) {
              return toGatewayError(err);
            }
          },
          accountInput,
          heartbeatIntervalMs: config.gate.heartbeatIntervalMs,
          gate,
          clientCalls,
          speech,
        });
      } catch (err) {
        const own = ownPort !== undefined && (err as { port?: number }).port === ownPort;
        throw listenError(
          err as NodeJS.ErrnoException,
          own ? 'worker gRPC' : 'gRPC',
          `${host}:${own ? ownPort : grpcPort}`,
          own ? 'server.workerGrpcPort' : 'GRPC_PORT',
        );
      }
      httpServer = app.listen(config.server.httpPort, host);
      // Long-lived streams (SSE, audio) must not be cut by Node's default request timeout.
      httpServer.requestTimeout = 0;
      await once(httpServer, 'listening').catch(async (err: NodeJS.ErrnoException) => {
        await grpcServer?.close();
        throw listenError(err, 'HTTP', `${host}:${config.server.httpPort}`, 'HTTP_PORT');
      });
      const httpPort = (httpServer.address() as AddressInfo).port;
      specsUrl = `${publicUrl(config, httpPort)}/specs`;
      running = true;
      const result: GatewayAddresses = {
        httpPort,
        grpcPort: grpcServer.port,
        httpUrl: `http://${host}:${httpPort}`,
        grpcAddress: `${host}:${grpcServer.port}`,
      };
      if (grpcServer.ownPort !== undefined) result.workerGrpcAddress = `${host}:${grpcServer.ownPort}`;
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
          await plugin.instance.stop?.();
        } catch (err) {
          logger.warn({ err, plugin: plugin.definition.name }, 'plugin close failed');
        }
      }
      await grpcServer?.close();
      await userSpace.stop();
      rateLimiter.close?.();
      stopDebiting();
      budgets.close();
      await storage.close();
      await tracing?.close().catch((err: unknown) => logger.warn({ err }, 'exporting the last traces failed'));
      if (httpServer) {
        httpServer.closeAllConnections();
        await new Promise<void>((resolve) => httpServer!.close(() => resolve()));
      }
    },
  };
}

/** A port taken (or not ours to take) is a BootError naming the address and the setting that moves it. */
function listenError(err: NodeJS.ErrnoException, what: string, address: string, variable: string): Error {
  const text = `${err.code ?? ''} ${err.message}`;
  if (/EADDRINUSE|address already in use/i.test(text)) {
    return new BootError(
      'PORT_IN_USE',
      `${what} address ${address} is already in use (another gateway running? set ${variable}, or 0 for any free port)`,
      [],
      err,
    );
  }
  if (/EACCES|permission denied/i.test(text)) return new BootError('PORT_IN_USE', `${what} address ${address}: permission denied`, [], err);
  if (/EADDRNOTAVAIL|ENOTFOUND/i.test(text))
    return new BootError('PORT_IN_USE', `${what} address ${address} is not an address of this machine (server.host)`, [], err);
  return err;
}

/**
 * On a shared store (embedded or MongoDB, with `limits.shared`, the default), the per-account rate
 * holds across every worker and gateway on it; otherwise each gateway counts on its own.
 */
async function createRateLimiter(config: GatewayConfig, storage: Storage, logger: Logger): Promise<RequestLimiter> {
  if (!config.limits.shared || storage.kind === 'memory') return new RateLimiter();
  return SharedRateLimiter.open(storage.docs, logger);
}

function publicUrl(config: GatewayConfig, httpPort: number): string {
  return (config.server.publicUrl ?? `http://${config.server.host}:${httpPort}`).replace(/\/$/, '');
}
