import { hostname as osHostname } from 'node:os';
import * as grpc from '@grpc/grpc-js';
import type { MethodDescriptorProto, StringMap } from '@model-gateway/protocol';
import type { BackoffOptions } from './backoff.js';
import { consoleLogger, type SdkLogger } from './logger.js';
import { PROCESS_INSTANCE_UUID } from './instance.js';

/** What the service tells the gateway about itself in `startServing`. */
export interface ServiceDescriptor {
  name: string;
  /** Default: true when a `fit` handler is given. */
  fittable?: boolean;
  methods?: Record<string, MethodDescriptorProto>;
  /** Protobuf-spec content for special data types (experimental). */
  schemaFiles?: StringMap;
}

export interface ModelServiceOptions {
  descriptor: ServiceDescriptor;
  /** Gateway addresses `host:port`, a list or a comma list. Default: env PLATFORM_GRPC_HOSTS, else PLATFORM_GRPC_HOST. */
  gateways?: string | string[];
  /** The secret registration key. Default: env PLATFORM_SERVICE_TOKEN. */
  connectionToken?: string;
  /** Default: env HOSTNAME, else the OS host name. */
  hostname?: string;
  version?: number;
  /** Default: env IMAGE_NAME when set. */
  image?: string;
  /** pino-compatible or console-like; default: warnings and errors to the console. */
  logger?: SdkLogger;
  /** Reconnect delays; default 100 ms growing to 5 s. */
  backoff?: BackoffOptions;
  /** Default: insecure, or TLS when env PLATFORM_GRPC_SECURE is true. */
  credentials?: grpc.ChannelCredentials;
  /** Extra gRPC channel options (message limits of MAX_MESSAGE_BYTES are always set unless overridden here). */
  channelOptions?: grpc.ChannelOptions;
  /** Deadline of the `healthCheck` that precedes every stream (default 5000 ms). */
  healthCheckTimeoutMs?: number;
  /** How long a draining connection waits for in-flight requests (default env PLATFORM_GRACEFUL_SHUTDOWN_CONNECTOR_MS, else 20000). */
  drainTimeoutMs?: number;
  /** After half-closing, how long to wait for the gateway to end the stream before cancelling it (default 2000 ms). */
  halfCloseTimeoutMs?: number;
  /** The silence limit is 3 × interval + this (default 1000 ms). */
  heartbeatGraceMs?: number;
  /** Ignore `cluster` messages and stay on the configured gateways. */
  ignoreClusterUpdates?: boolean;
  /** Default: one random UUID per process. */
  instanceBootUuid?: string;
  /**
   * Open the bulk lane a gateway offers: a second stream on which it sends this instance's large
   * requests, so small ones never wait behind them (default true).
   */
  bulkLane?: boolean;
  /** Where the defaults are read from (default process.env). */
  env?: Record<string, string | undefined>;
}

export interface ResolvedOptions {
  descriptor: ServiceDescriptor;
  gateways: string[];
  connectionToken: string;
  hostname: string;
  version: number | undefined;
  image: string | undefined;
  logger: SdkLogger;
  backoff: BackoffOptions;
  credentials: grpc.ChannelCredentials;
  channelOptions: grpc.ChannelOptions;
  healthCheckTimeoutMs: number;
  drainTimeoutMs: number;
  halfCloseTimeoutMs: number;
  heartbeatGraceMs: number;
  ignoreClusterUpdates: boolean;
  instanceBootUuid: string;
  bulkLane: boolean;
}

export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

/** `host:port` without a scheme or a trailing slash; gRPC targets have neither. */
export function normalizeAddress(address: string): string {
  return address
    .trim()
    .replace(/^(grpc|http|https):\/\//i, '')
    .replace(/\/+$/, '');
}

export function parseAddressList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const parts = Array.isArray(value) ? value : value.split(',');
  return [...new Set(parts.map(normalizeAddress).filter((a) => a.length > 0))];
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function envNumber(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

/** Options with their defaults filled in from the environment; throws ConfigurationError when a required one is missing. */
export function resolveOptions(options: ModelServiceOptions, hasFitHandler: boolean): ResolvedOptions {
  const env = options.env ?? process.env;
  const gateways = parseAddressList(
    options.gateways ?? (env.PLATFORM_GRPC_HOSTS?.trim() ? env.PLATFORM_GRPC_HOSTS : env.PLATFORM_GRPC_HOST),
  );
  if (gateways.length === 0) {
    throw new ConfigurationError('No gateway address: pass options.gateways or set PLATFORM_GRPC_HOSTS or PLATFORM_GRPC_HOST');
  }
  const connectionToken = options.connectionToken ?? env.PLATFORM_SERVICE_TOKEN;
  if (!connectionToken) {
    throw new ConfigurationError('No connection token: pass options.connectionToken or set PLATFORM_SERVICE_TOKEN');
  }
  if (!options.descriptor?.name) throw new ConfigurationError('options.descriptor.name is required');
  const secure = /^(1|true|yes)$/i.test(env.PLATFORM_GRPC_SECURE ?? '');
  return {
    descriptor: { ...options.descriptor, fittable: options.descriptor.fittable ?? hasFitHandler },
    gateways,
    connectionToken,
    hostname: options.hostname ?? env.HOSTNAME ?? osHostname(),
    version: options.version,
    image: options.image ?? (env.IMAGE_NAME || undefined),
    logger: options.logger ?? consoleLogger(),
    backoff: options.backoff ?? {},
    credentials: options.credentials ?? (secure ? grpc.credentials.createSsl() : grpc.credentials.createInsecure()),
    channelOptions: options.channelOptions ?? {},
    healthCheckTimeoutMs: positive(options.healthCheckTimeoutMs, 5000),
    drainTimeoutMs: positive(options.drainTimeoutMs ?? envNumber(env.PLATFORM_GRACEFUL_SHUTDOWN_CONNECTOR_MS), 20_000),
    halfCloseTimeoutMs: positive(options.halfCloseTimeoutMs, 2000),
    heartbeatGraceMs: positive(options.heartbeatGraceMs, 1000),
    ignoreClusterUpdates: options.ignoreClusterUpdates ?? false,
    instanceBootUuid: options.instanceBootUuid ?? PROCESS_INSTANCE_UUID,
    bulkLane: options.bulkLane ?? true,
  };
}
