import * as grpc from '@grpc/grpc-js';
import { gatewayError, type GatewayError } from '../errors.js';
import { toApiErrorProto } from './api-error.js';
import type { ClientCalls } from './client-calls.js';
import type { Gate } from '../gate/gate.js';
import { gateServiceDefinition, type ClientRequestProto, type GateHandlers, type GateToServiceProto } from '../../proto/src/index.js';
import { clientMessageDeserializer, type AdmittedKey, type ClientMessageLimits } from './client-message.js';
import type { AccountInputRate } from '../flow/byte-rate.js';
import { receiveLimitInterceptor, receiveLimitOf } from './receive-limits.js';
import { releaseGatheredChunksInterceptor } from './gathered-chunks.js';
import { withRawExt } from './raw-ext.js';
import { writeRawExtInPieces } from './raw-ext-writes.js';
import { callOfStream } from './grpc-call-internals.js';
import { widenServiceWindow } from './service-window.js';
import { UnauthenticatedBytes, trust, unauthenticatedBytesInterceptor, type WatchedCall } from './unauthenticated-bytes.js';
import { UnidentifiedCalls } from './unidentified-calls.js';

/** The client calls take ClientMessages: their deserializer reads only what admission needs. */
type ClientMethod = 'process' | 'processResponseStream' | 'processStream';
type ServedHandlers = Pick<GateHandlers, 'healthCheck' | 'processAsync' | 'processSynthesis' | 'processRecognition'> &
  Pick<ClientCalls, ClientMethod>;
import { addGateReflection } from './reflection.js';

/** Handlers of the speech calls, supplied by whatever implements them (see core/speech). */
export type SpeechHandlers = Pick<GateHandlers, 'processSynthesis' | 'processRecognition'>;

export interface GrpcServerOptions {
  host: string;
  port: number;
  /** A second port served the same way (a worker's own port, next to the port all workers share). */
  ownPort?: number;
  /** Largest message of service streams (once registered) and speech calls. */
  maxMessageBytes: number;
  /** Bounds of client-call messages, checked before they are read or decoded. */
  client: ClientMessageLimits;
  /** Largest message of a processAsync stream before it has registered. */
  registrationMaxMessageBytes: number;
  /** Bytes of messages from callers not yet authenticated held at once, over all calls. */
  unauthenticatedBytesInFlight: number;
  /** Unauthenticated bytes read per second over all peers (unauthenticated-bytes.ts). */
  unauthenticatedBytesPerSecond?: number;
  /** Calls without their first message held at once, over all peers (unidentified-calls.ts). */
  unauthenticatedCalls: number;
  /** How long a call may take to send its first message. */
  firstMessageTimeoutMs: number;
  /** The key check of client calls (the key's account when it is good), run on the head of a large first message. */
  checkClientKey?: (token: string | undefined) => GatewayError | AdmittedKey;
  /** Input bytes read per second for each account (`limits.inputBytesPerSecondPerAccount`): large client messages wait on it. */
  accountInput?: AccountInputRate;
  heartbeatIntervalMs: number;
  gate: Gate;
  clientCalls: ClientCalls;
  speech?: SpeechHandlers;
}

export interface RunningGrpcServer {
  server: grpc.Server;
  port: number;
  ownPort?: number;
  /** Stops accepting calls and waits for open ones; forces them closed after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/** Speech calls answered in-band until a speech implementation is configured. */
const speechNotImplemented: SpeechHandlers = {
  processSynthesis: (call) => {
    call.write({ error: toApiErrorProto(gatewayError('NOT_IMPLEMENTED', { args: { what: 'processSynthesis' } })) });
    call.end();
  },
  processRecognition: (call) => {
    call.write({ error: toApiErrorProto(gatewayError('NOT_IMPLEMENTED', { args: { what: 'processRecognition' } })) });
    call.end();
  },
};

export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const definition = gateServiceDefinition();
  const clientMethods = ['process', 'processResponseStream', 'processStream'] as const;
  const clientPaths = new Set(clientMethods.map((name) => definition[name]!.path));
  const processAsyncPath = definition.processAsync!.path;
  const definedPaths = new Set(Object.values(definition).map((method) => method.path));
  const serviceSerialize = definition.processAsync!.responseSerialize as (message: GateToServiceProto) => Buffer;
  const limitOf = (path: string) =>
    clientPaths.has(path) ? options.client.maxMessageBytes : path === processAsyncPath ? options.registrationMaxMessageBytes : undefined;
  // Client calls get a deserializer that reads only what admission needs (client-message.ts).
  // Service streams get a serializer that writes a large ext call's params as the caller sent them
  // (raw-ext.ts), used where grpc-js's call cannot take the message in pieces (raw-ext-writes.ts).
  const served: grpc.ServiceDefinition = Object.fromEntries(
    Object.entries(definition).map(([name, method]) => [
      name,
      clientPaths.has(method.path)
        ? {
            ...method,
            requestDeserialize: clientMessageDeserializer(
              options.client,
              method.requestDeserialize as (bytes: Buffer) => ClientRequestProto,
            ),
          }
        : method.path === processAsyncPath
          ? { ...method, responseSerialize: withRawExt(method.responseSerialize as (message: { ext?: unknown }) => Buffer) }
          : method,
    ]),
  );
  const unauthenticated = new UnauthenticatedBytes(options.unauthenticatedBytesInFlight, options.unauthenticatedBytesPerSecond);
  const watched = (path: string): WatchedCall =>
    clientPaths.has(path) ? 'clientCall' : path === processAsyncPath ? 'untilTrusted' : definedPaths.has(path) ? 'firstMessage' : 'keyless';
  const server = new grpc.Server({
    interceptors: [
      receiveLimitInterceptor(limitOf),
      releaseGatheredChunksInterceptor(),
      unauthenticatedBytesInterceptor(unauthenticated, watched, {
        checkClientKey: options.checkClientKey,
        accountInput: options.accountInput,
        extLimits: options.client,
        calls: new UnidentifiedCalls(options.unauthenticatedCalls, options.firstMessageTimeoutMs),
      }),
    ],
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.max_send_message_length': options.maxMessageBytes,
    // SDK clients ping every 120 s, also without active calls; the grpc-js default (5 min minimum
    // between pings without data) would answer them with GOAWAY too_many_pings.
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.http2.min_ping_interval_without_data_ms': 10_000,
  });
  const speech = options.speech ?? speechNotImplemented;
  const handlers: ServedHandlers = {
    healthCheck: (_call, callback) => {
      callback(null, { status: 'Ok', interval: options.heartbeatIntervalMs });
    },
    processAsync: (stream) => {
      // A large ext call's message goes to the service in pieces, its caller's bytes as they are.
      writeRawExtInPieces(callOfStream(stream), serviceSerialize);
      // Registered: the stream may now carry messages up to the service limit, outside the budget of
      // unauthenticated bytes, and its connection gets a wider receive window (service-window.ts).
      options.gate.acceptServiceStream(stream, () => {
        trust(stream);
        widenServiceWindow(stream);
        return receiveLimitOf(stream).set(options.maxMessageBytes);
      });
    },
    process: options.clientCalls.process,
    processResponseStream: options.clientCalls.processResponseStream,
    processStream: options.clientCalls.processStream,
    processSynthesis: speech.processSynthesis,
    processRecognition: speech.processRecognition,
  };
  server.addService(served, handlers);
  addGateReflection(server);

  // grpc-js also logs a failed bind on its own ("E No address added…"); the caller reports it, once.
  if (!process.env.GRPC_VERBOSITY) grpc.setLogVerbosity(grpc.logVerbosity.NONE);
  // A failed bind names its port (`err.port`): the caller tells which setting moves it.
  const bind = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.bindAsync(`${options.host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(Object.assign(err, { port })) : resolve(bound),
      );
    });
  let port: number;
  let ownPort: number | undefined;
  try {
    port = await bind(options.port);
    if (options.ownPort !== undefined) ownPort = await bind(options.ownPort);
  } catch (err) {
    server.forceShutdown();
    throw err;
  } finally {
    if (!process.env.GRPC_VERBOSITY) grpc.setLogVerbosity(grpc.logVerbosity.ERROR);
  }

  return {
    server,
    port,
    ...(ownPort !== undefined ? { ownPort } : {}),
    close: (graceMs = 2000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
