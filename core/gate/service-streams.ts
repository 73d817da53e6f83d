import type { GatewayConfig } from '../config/types.js';
import type { Directory, ServiceEntry } from '../admission/directory.js';
import { gatewayError, type GatewayError } from '../errors.js';
import type { Logger } from '../observe/logger.js';
import type { GatewayEvents } from '../observe/events.js';
import { toApiErrorProto } from '../grpc/api-error.js';
import {
  BULK_LANE,
  GateHeaders,
  parseLoadReport,
  type GateToServiceProto,
  type ServiceToGateProto,
  type StartServingProto,
} from '../../proto/src/index.js';
import type { BillingLedger } from './billing-ledger.js';
import type { CallTable } from './call-table.js';
import { BulkLane } from './bulk-lane.js';
import type { ClusterUpdateFor } from './cluster-update.js';
import type { Instance } from './instance.js';
import type { InstancePool } from './instance-pool.js';
import type { RecentCallers } from './recent-callers.js';
import { serviceLabel } from './service-label.js';
import { ServiceSession, type ServiceStream } from './service-session.js';

export interface ServiceStreamParts {
  readonly directory: Directory;
  readonly config: GatewayConfig['gate'];
  readonly clusterUpdate: ClusterUpdateFor;
  readonly pool: InstancePool;
  readonly table: CallTable;
  readonly billing: BillingLedger;
  readonly recentCallers: RecentCallers;
  readonly events: GatewayEvents;
  readonly log: Logger;
  /** Whether the Gate is shutting down (new streams are refused then). */
  readonly closed: () => boolean;
}

/**
 * The instances' side of the Gate: a `processAsync` stream from its first message (which must be a
 * valid `startServing`) to its end, and every message an instance sends (stream or in-process):
 * answers go to the call table, load reports and stopServing to the instance, charges to the ledger.
 */
export class ServiceStreams {
  readonly #parts: ServiceStreamParts;

  constructor(parts: ServiceStreamParts) {
    this.#parts = parts;
  }

  /**
   * Handles one `processAsync` stream from its first message to its end. A stream that has not
   * registered within `registrationTimeoutMs` is closed with START_SERVING_TIMEOUT: until then its
   * peer is unauthenticated, and thousands of idle streams must not stay open. `onRegistered` runs
   * once the stream's startServing is accepted (the gRPC server then raises its message limit).
   */
  accept(stream: ServiceStream, onRegistered?: () => void): void {
    const { config, log, pool } = this.#parts;
    let session: ServiceSession | undefined;
    /** Whether the stream is its instance's bulk lane: its end ends the instance (a draining one, with its last stream). */
    let lane = false;
    let finished = false;
    const finish = (reason: string, halfClosed = false) => {
      if (finished) return;
      finished = true;
      clearTimeout(registration);
      if (session && halfClosed && session.halfClosedWhileDraining(lane))
        return session.log.debug(`${lane ? 'bulk lane' : 'stream'} ended while draining`);
      if (session) return pool.end(session, lane ? `bulk lane: ${reason}` : reason);
      log.debug({ reason }, 'service stream closed before it registered');
      endQuietly(stream);
    };
    const registration = setTimeout(() => {
      if (session || finished) return;
      const error = gatewayError('START_SERVING_TIMEOUT', { args: { timeoutMs: config.registrationTimeoutMs } });
      log.debug('service stream closed: no startServing in time');
      writeQuietly(stream, { error: toApiErrorProto(error) });
      finish('no startServing in time');
    }, config.registrationTimeoutMs);
    // At debug level, with the stream's end before registration: what an operator (and a test whose
    // service never got ready) needs to tell a stream that never came from one that never registered.
    log.debug({ peer: stream.getPeer() }, 'service stream opened');
    stream.on('data', (message: ServiceToGateProto) => {
      if (finished) return;
      if (session) {
        session.touch();
        this.received(session, message);
        return;
      }
      lane = message.headers?.[GateHeaders.lane] === BULK_LANE;
      session = lane ? this.#attachLane(stream, message) : this.#register(stream, message);
      if (!session) return finish('registration refused');
      clearTimeout(registration);
      onRegistered?.();
    });
    stream.on('end', () => finish('stream ended by the service', true));
    stream.on('cancelled', () => finish('stream cancelled'));
    stream.on('error', (err: Error) => {
      log.debug({ err: err.message }, 'service stream error');
      finish(`stream error: ${err.message}`);
    });
  }

  /** A message from an instance (a registered stream, or an in-process worker's reply). */
  received(instance: Instance, message: ServiceToGateProto): void {
    switch (message.body) {
      case 'heartBeat': {
        const load = parseLoadReport(message.headers);
        if (load) instance.reportLoad(load);
        return;
      }
      case 'stopServing':
        this.#parts.pool.drain(instance);
        instance.log.info({ reason: message.stopServing?.reason }, 'service stopped serving; draining');
        return;
      case 'deferredBillingCharge':
      case 'deferredBillingCharges':
        this.#parts.billing.record(instance.service, message, this.#parts.recentCallers.accountOf(Number(message.requestId ?? 0)));
        return;
      case 'startServing':
        instance.log.warn('repeated startServing on a registered stream ignored');
        return;
      case undefined:
        instance.log.warn({ requestId: message.requestId }, 'service message without a body ignored');
        return;
      default:
        this.#parts.table.deliver(instance, message);
    }
  }

  #register(stream: ServiceStream, message: ServiceToGateProto): ServiceSession | undefined {
    const { config, pool, table } = this.#parts;
    const admitted = this.#admit(stream, message);
    if (!admitted) return undefined;
    const { start, service } = admitted;
    const session = new ServiceSession(stream, service, start, this.#parts.log);
    const previous = pool.previousOf(session);
    if (previous) table.followed(pool.replace(previous, session), session);
    else pool.add(session);

    const offer = config.bulkLaneBytes > 0 ? { headers: { [GateHeaders.bulkLaneBytes]: String(config.bulkLaneBytes) } } : {};
    session.send({ serviceInfo: { accountId: service.accountId, modelId: service.id, modelName: service.name }, ...offer });
    const cluster = this.#parts.clusterUpdate(stream.getHost());
    if (cluster) session.send({ cluster });
    session.startHeartbeats(config.heartbeatIntervalMs, () => pool.end(session, 'heartbeat timeout'));
    session.log.info({ hostname: start.hostname, version: start.version, reconnect: Boolean(previous) }, 'service instance connected');
    this.#parts.events.emit('instance', { service: serviceLabel(service), change: 'connected', reconnect: Boolean(previous) });
    return session;
  }

  /**
   * A bulk lane (bulk-lane.ts): a stream whose startServing is marked `Z-lane: bulk` joins the serving
   * instance of the same service (by its connection token) and boot UUID, which has none yet. It is
   * refused when there is no such instance (the service opens it after its own stream registered) or
   * when the gateway offers no lane.
   */
  #attachLane(stream: ServiceStream, message: ServiceToGateProto): ServiceSession | undefined {
    const { config, pool } = this.#parts;
    const admitted = this.#admit(stream, message);
    if (!admitted) return undefined;
    const bootUuid = admitted.start.instanceBootUuid;
    const instance = bootUuid ? pool.previousOf({ service: admitted.service, bootUuid }) : undefined;
    const session = instance instanceof ServiceSession && instance.state === 'serving' ? instance : undefined;
    if (config.bulkLaneBytes <= 0 || !session?.attachBulkLane(new BulkLane(stream, config.bulkLaneBytes))) {
      return this.#refuse(stream, gatewayError('BULK_LANE_REFUSED', { args: { bootUuid } }));
    }
    session.log.debug('service instance opened its bulk lane');
    return session;
  }

  /** The checks every startServing passes: its body, its service's connection token, a gateway not shutting down. */
  #admit(stream: ServiceStream, message: ServiceToGateProto): { start: StartServingProto; service: ServiceEntry } | undefined {
    if (message.body !== 'startServing' || !message.startServing) {
      return this.#refuse(stream, gatewayError('START_SERVING_REQUIRED', { args: { got: message.body } }));
    }
    const start = message.startServing;
    const service = this.#parts.directory.serviceForConnectionToken(start.connectionToken ?? '');
    if (!service) return this.#refuse(stream, gatewayError('INSTANCE_BY_TOKEN_NOT_FOUND'));
    if (this.#parts.closed()) return this.#refuse(stream, gatewayError('GATE_IS_SHUT_DOWN'));
    return { start, service };
  }

  #refuse(stream: ServiceStream, error: GatewayError): undefined {
    this.#parts.log.warn({ code: error.grpcCode }, `service stream refused: ${error.message}`);
    stream.write({ error: toApiErrorProto(error) });
    return undefined;
  }
}

function writeQuietly(stream: ServiceStream, message: GateToServiceProto): void {
  try {
    stream.write(message);
  } catch {
    // Already closed by the peer.
  }
}

function endQuietly(stream: ServiceStream): void {
  try {
    stream.end();
  } catch {
    // Already closed by the peer.
  }
}
