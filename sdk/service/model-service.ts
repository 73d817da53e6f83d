import { EventEmitter } from 'node:events';
import type {
  ClusterUpdateProto,
  DeferredBillingChargeRequestProto,
  DeferredBillingChargesProto,
  ServiceInfoProto,
  ServiceToGateProto,
  StartServingProto,
} from '@model-gateway/protocol';
import { GateConnection, GateConnectionError, type ConnectionHost } from './connection.js';
import { Dispatcher } from './dispatcher.js';
import type { ModelHandlers } from './handlers.js';
import { normalizeAddress, parseAddressList, resolveOptions, type ModelServiceOptions, type ResolvedOptions } from './options.js';
import type { SessionEnd } from './session.js';

export interface ModelServiceEvents {
  /** A stream to this gateway is open and startServing was sent. */
  connected: [gateway: string];
  /** A stream to this gateway closed; a reconnect follows unless the service stops. */
  disconnected: [gateway: string, reason: string];
  serviceInfo: [info: ServiceInfoProto];
  /** The gateway list after a cluster update was applied. */
  cluster: [servers: string[]];
  /** A fatal error of one gateway connection (emitted only when someone listens; always logged). */
  error: [error: GateConnectionError];
}

/**
 * A model service connected to one or more gateways. Create it with handlers and options, call
 * start() (or use serveModel()), await ready(), and call stop() on shutdown.
 */
export class ModelService extends EventEmitter<ModelServiceEvents> implements ConnectionHost {
  readonly options: ResolvedOptions;
  readonly dispatcher: Dispatcher;
  private readonly connections = new Map<string, GateConnection>();
  /** Connections closing in the background (left the cluster); stop() waits for them too. */
  private readonly closing = new Set<Promise<void>>();
  private latestServiceInfo: ServiceInfoProto | undefined;
  private started = false;
  private stopping: Promise<void> | undefined;
  private readonly readyPromise: Promise<void>;
  private resolveReady!: () => void;
  private rejectReady!: (err: Error) => void;
  private readySettled = false;

  constructor(handlers: ModelHandlers, options: ModelServiceOptions) {
    super();
    this.options = resolveOptions(options, typeof handlers.fit === 'function');
    this.dispatcher = new Dispatcher(handlers, {
      logger: this.options.logger,
      serviceInfo: () => this.latestServiceInfo,
    });
    this.readyPromise = new Promise<void>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.readyPromise.catch(() => {});
  }

  get instanceBootUuid(): string {
    return this.options.instanceBootUuid;
  }

  /** The latest `serviceInfo` any gateway sent. */
  get serviceInfo(): ServiceInfoProto | undefined {
    return this.latestServiceInfo;
  }

  /** Opens a connection to every configured gateway. Idempotent. */
  start(): this {
    if (this.started) return this;
    this.started = true;
    for (const address of this.options.gateways) this.addConnection(address);
    return this;
  }

  /**
   * Resolves once a gateway has spoken on a stream (normally its first heartBeat); rejects when every
   * gateway connection failed fatally (e.g. an unknown connection token) or the service stopped first.
   */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  /** Gateways (by cluster name) with an open stream that takes requests. */
  connectedGateways(): string[] {
    return [...this.connections.values()].filter((c) => c.serving).map((c) => c.name);
  }

  /** Gateways the service keeps connections to (connected or reconnecting). */
  gateways(): string[] {
    return [...this.connections.keys()];
  }

  /**
   * Graceful stop: every connection sends stopServing, takes no new requests, waits for in-flight ones
   * (bounded by drainTimeoutMs), then half-closes. No reconnects follow.
   */
  stop(reason = 'service stop'): Promise<void> {
    this.stopping ??= (async () => {
      this.settleReady(new Error('The model service stopped before any gateway answered'));
      const all = [...this.connections.values()];
      this.connections.clear();
      await Promise.all([...all.map((c) => c.close(reason)), ...this.closing]);
    })();
    return this.stopping;
  }

  /** Sends `deferredBillingCharge` (requestId 0) on a connected stream; false when none is connected. */
  sendDeferredBillingCharge(charge: DeferredBillingChargeRequestProto): boolean {
    return this.sendToAnyGate({ deferredBillingCharge: charge });
  }

  /** Sends `deferredBillingCharges` (requestId 0) on a connected stream; false when none is connected. */
  sendDeferredBillingCharges(charges: DeferredBillingChargesProto): boolean {
    return this.sendToAnyGate({ deferredBillingCharges: charges });
  }

  private sendToAnyGate(message: ServiceToGateProto): boolean {
    const open = [...this.connections.values()].filter((c) => c.currentSession?.canWrite);
    // Random order, as the Java SDK's sendToAnyGate; fall through to the next on a failed write.
    for (let i = open.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [open[i], open[j]] = [open[j] as GateConnection, open[i] as GateConnection];
    }
    for (const connection of open) {
      if (connection.currentSession?.send({ requestId: 0, ...message })) return true;
    }
    this.options.logger.warn({ body: Object.keys(message)[0] }, 'model-sdk: no connected gateway to send to');
    return false;
  }

  // ---- ConnectionHost

  startServing(): StartServingProto {
    const { options } = this;
    const { descriptor } = options;
    const message: StartServingProto = {
      connectionToken: options.connectionToken,
      serviceDescriptor: {
        name: descriptor.name,
        fittable: descriptor.fittable ?? false,
        methods: descriptor.methods ?? {},
        schemaFiles: descriptor.schemaFiles ?? {},
      },
      hostname: options.hostname,
      instanceBootUuid: options.instanceBootUuid,
    };
    if (options.version !== undefined) message.version = options.version;
    if (options.image !== undefined) message.image = options.image;
    return message;
  }

  onGateMessage(): void {
    this.settleReady();
  }

  onSessionOpen(connection: GateConnection): void {
    this.emit('connected', connection.name);
  }

  onSessionClosed(connection: GateConnection, end: SessionEnd): void {
    this.emit('disconnected', connection.name, end.reason);
  }

  onServiceInfo(info: ServiceInfoProto): void {
    this.latestServiceInfo = info;
    this.emit('serviceInfo', info);
  }

  onFatal(connection: GateConnection, error: GateConnectionError): void {
    if (this.connections.get(connection.name) === connection) this.connections.delete(connection.name);
    if (this.listenerCount('error') > 0) this.emit('error', error);
    const anyAlive = [...this.connections.values()].some((c) => !c.failed);
    if (!anyAlive) this.settleReady(error);
  }

  /**
   * Converges to exactly `servers`: the receiving connection takes the name `currentServer`, a connection
   * opens to every listed gateway without one, and connections to unlisted gateways close gracefully.
   * An empty list, or one without currentServer, is ignored with a warning.
   */
  onCluster(connection: GateConnection, update: ClusterUpdateProto): void {
    if (this.options.ignoreClusterUpdates || this.stopping) return;
    const servers = parseAddressList(update.servers ?? []);
    const current = normalizeAddress(update.currentServer ?? '');
    if (servers.length === 0) {
      this.options.logger.warn({ gateway: connection.name }, 'model-sdk: cluster update with no servers ignored');
      return;
    }
    if (!current || !servers.includes(current)) {
      this.options.logger.warn(
        { gateway: connection.name, servers, current },
        'model-sdk: cluster update without currentServer in servers ignored',
      );
      return;
    }
    if (this.connections.get(connection.name) !== connection) return; // already closed or replaced
    if (connection.name !== current) {
      this.connections.delete(connection.name);
      const duplicate = this.connections.get(current);
      if (duplicate) this.closeInBackground(duplicate, 'duplicate connection');
      this.options.logger.info({ from: connection.name, to: current }, 'model-sdk: gateway renamed by cluster update');
      connection.rename(current);
      this.connections.set(current, connection);
    }
    for (const server of servers) if (!this.connections.has(server)) this.addConnection(server);
    for (const [name, other] of this.connections) {
      if (servers.includes(name)) continue;
      this.connections.delete(name);
      this.options.logger.info({ gateway: name }, 'model-sdk: gateway left the cluster; closing its connection');
      this.closeInBackground(other, 'gateway left the cluster');
    }
    this.emit('cluster', servers);
  }

  private closeInBackground(connection: GateConnection, reason: string): void {
    const closing = connection
      .close(reason)
      .catch((err: unknown) => this.options.logger.warn({ gateway: connection.name, err }, 'model-sdk: closing a connection failed'))
      .finally(() => this.closing.delete(closing));
    this.closing.add(closing);
  }

  private addConnection(address: string): void {
    const connection = new GateConnection(this, address);
    this.connections.set(address, connection);
    connection.start();
  }

  private settleReady(error?: Error): void {
    if (this.readySettled) return;
    this.readySettled = true;
    if (error) this.rejectReady(error);
    else this.resolveReady();
  }
}

/**
 * Exit status (sysexits EX_CONFIG) of a service program that no gateway accepts: its connection token
 * or gateway address is wrong, which retrying would not change. The gateway's launcher does not
 * restart a service that exits with it.
 */
export const EX_CONFIG = 78;

/**
 * Creates a ModelService and starts it: the entry of a service program. `await service.ready()` to
 * wait for the first gateway. When every gateway refuses the connection token, the program ends
 * with status EX_CONFIG after the one error line the connection logged, instead of an unhandled
 * rejection's stack from `await service.ready()`; embed a `ModelService` to handle that yourself.
 */
export function serveModel(handlers: ModelHandlers, options: ModelServiceOptions): ModelService {
  const service = new ModelService(handlers, options);
  // Registered before any caller's await on ready(), so it runs first.
  service.ready().catch((err: unknown) => {
    if (err instanceof GateConnectionError) process.exit(EX_CONFIG);
  });
  return service.start();
}
