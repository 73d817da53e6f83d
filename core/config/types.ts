/** The validated, normalised and frozen gateway configuration (schemas/config.schema.json). */

import type { Budget } from '../userspace/budgets.js';
import type { Prices } from '../userspace/prices.js';

/** `MANAGE`: the user-space API (docs/user-space.md) as an owner of the key's own account. */
export type Permission = 'MODEL_REQUESTS' | 'READ_DATA' | 'MODIFY_DATA' | 'MANAGE';
export const PERMISSIONS: readonly Permission[] = ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA', 'MANAGE'];

export interface AccountConfig {
  readonly id: number;
  readonly name: string;
  readonly requestsPerSecond: number;
  /** Its own `limits.inputBytesPerSecondPerAccount` (core/flow/byte-rate.ts); undefined: that limit. */
  readonly inputBytesPerSecond?: number;
  readonly blocked: boolean;
  /** Spending limits of the whole account (core/userspace/budgets.ts). */
  readonly budgets?: readonly Budget[];
}

export interface ApiKeyConfig {
  readonly name: string;
  readonly accountId: number;
  /** `sha256:<hex>`; the key itself is never kept. */
  readonly keyHash: string;
  readonly permissions: readonly Permission[];
  /** Requests with this key that say sampled in their W3C traceparent are traced whatever `tracing.sampleRatio` says. */
  readonly followTraceSampling?: boolean;
}

export interface NamedConfig {
  readonly id: number;
  readonly name?: string;
  readonly default: boolean;
  readonly config: Readonly<Record<string, unknown>>;
}

export type ServiceFamily = 'openai' | 'anthropic' | 'other';

/**
 * An HTTP engine the gateway calls itself (`services[].upstream`), served by the `upstream` plugin
 * as an in-process instance of the service. Core only carries it.
 */
export interface UpstreamConfig {
  readonly api: 'openai' | 'anthropic';
  readonly baseUrl: string;
  /** Name of the environment variable with the engine's key. */
  readonly apiKeyEnv?: string;
  /** The engine's key itself: a service stored through the user-space API only (never shown or logged). */
  readonly apiKey?: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Our model name → the engine's. */
  readonly models: Readonly<Record<string, string>>;
  /** Names missing from `models` go to the engine as they are (default false: only mapped names are callable). */
  readonly passModels?: boolean;
  readonly defaultModel?: string;
  readonly maxConcurrency: number;
  /** Engine requests one account may run at once (default maxConcurrency - 1, at least 1); plugins/upstream/fair-share.ts. */
  readonly maxConcurrencyPerAccount?: number;
  /** The most output tokens the engine is asked for (a caller asking for fewer keeps theirs); plugins/upstream/engine-request.ts. */
  readonly maxOutputTokens?: number;
  /** The engine's context window in tokens, to name a prompt over it (plugins/upstream/context-window.ts). */
  readonly contextTokens?: number;
  readonly connectTimeoutMs: number;
  readonly firstByteTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly healthCheck?: {
    readonly path: string;
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly failuresBeforeDown: number;
  };
}

export interface ServiceConfig {
  readonly id: number;
  readonly name: string;
  readonly accountId: number;
  readonly public: boolean;
  /** `/health` is `degraded` while it has no connected instance. */
  readonly required?: boolean;
  /** `sha256:<hex>` of each accepted connection token. */
  readonly connectionTokenHashes: readonly string[];
  readonly timeoutSec?: number;
  readonly provider?: string;
  readonly defaultModel?: string;
  readonly family: ServiceFamily;
  /** Names without a slash that call this service on the chat adapters (unique across services). */
  readonly aliases?: readonly string[];
  /** The service takes OpenAI Responses API bodies itself: the standard adapter passes them through. */
  readonly nativeResponses?: boolean;
  readonly batch: boolean;
  readonly fittable: boolean;
  readonly configs: readonly NamedConfig[];
  readonly fitConfigs: readonly NamedConfig[];
  readonly upstream?: UpstreamConfig;
  /** `<account>/<service>[/model]` tried in order when this service cannot answer (docs/routing.md). */
  readonly fallbacks?: readonly string[];
  /** Prefix affinity: the first `messages` chat messages pick a consistent instance (docs/routing.md). */
  readonly affinity?: { readonly messages: number };
  /** How long sync and chat requests wait for an instance when none is connected (0: fail at once). */
  readonly waitForInstanceMs?: number;
  /** Started once when a request finds no instance (core/gate/wake-on-request.ts). */
  readonly waker?: WakerConfig;
  /** What its tokens cost, per million (core/userspace/prices.ts): spend and money budgets. */
  readonly prices?: Prices;
}

export interface WakerConfig {
  readonly command?: readonly string[];
  readonly url?: string;
  readonly method: 'GET' | 'POST';
  readonly cooldownMs: number;
}

export interface RegistryProviderConfig {
  readonly name: string;
  readonly displayName?: string;
}

export interface RegistryModelConfig {
  readonly name: string;
  readonly displayName?: string;
  readonly providers: readonly string[];
  /** Checked against schemas/registry/parameters.schema.json when the registry is built. */
  readonly parameters?: Readonly<Record<string, unknown>>;
  readonly createdAt?: string;
  readonly updatedAt?: string;
  /** Per million input and output tokens, where a service's own prices name no price for this model. */
  readonly prices?: { readonly input: number; readonly output: number; readonly currency: string };
}

export interface LaunchConfig {
  readonly name: string;
  /** Absolute path of the entry file. */
  readonly module: string;
  readonly env: Readonly<Record<string, string>>;
  readonly requires: readonly string[];
  /** A missing module is a warning at start, not a refused config. */
  readonly optional: boolean;
}

export type MemberRole = 'owner' | 'developer' | 'viewer';

export interface UserSpaceConfig {
  readonly syncIntervalMs: number;
  readonly slowWriteGraceMs: number;
  readonly sessionTtlHours: number;
  readonly loginAttemptsPerMinute: number;
  /** Seeded at start when absent (passwords as given after `${ENV}` substitution; hashed when stored). */
  readonly users: readonly {
    readonly email: string;
    readonly password: string;
    readonly operator: boolean;
    readonly accounts: Readonly<Record<string, MemberRole>>;
  }[];
}

export interface CustomPluginConfig {
  /** Absolute module path. */
  readonly path: string;
  readonly enabled: boolean;
}

export interface GatewayConfig {
  readonly server: {
    readonly host: string;
    readonly httpPort: number;
    readonly grpcPort: number;
    /** Gateway processes on this host (`auto` resolved to the core count); 1 runs no cluster. */
    readonly workers: number;
    /** Worker i's own gRPC port is workerGrpcPort + i (default grpcPort + 1). */
    readonly workerGrpcPort?: number;
    readonly publicUrl?: string;
    readonly bodyLimitBytes: number;
    /** Bytes of a refused HTTP body's rest read and dropped so the client reads the answer (core/http/body-drain.ts). */
    readonly refusedBodyDrainBytes: number;
    /** One info line per HTTP request. */
    readonly accessLog: boolean;
    readonly grpcMaxMessageBytes: number;
    readonly grpcClientMaxMessageBytes: number;
    readonly grpcClientMaxHeaders: number;
    readonly grpcClientMaxHeaderBytes: number;
    readonly grpcRegistrationMaxMessageBytes: number;
    /** Bytes of unauthenticated gRPC input held at once, gateway-wide (core/grpc/unauthenticated-bytes.ts). */
    readonly unauthenticatedBytesInFlight: number;
    /** Unauthenticated gRPC bytes read per second, gateway-wide; past it their streams wait. */
    readonly unauthenticatedBytesPerSecond: number;
    /** gRPC calls without their first message held at once, gateway-wide (core/grpc/unidentified-calls.ts). */
    readonly unauthenticatedCalls: number;
    /** How long a gRPC call may take to send its first message. */
    readonly firstMessageTimeoutMs: number;
  };
  readonly gate: {
    readonly heartbeatIntervalMs: number;
    readonly defaultTimeoutSec: number;
    readonly drainTimeoutMs: number;
    readonly registrationTimeoutMs: number;
    readonly maxBufferedAnswerBytes: number;
    readonly maxAnswerBytes: number;
    readonly servers: readonly string[];
    readonly currentServer?: string;
    /** Retries of one request on fallback services at most. */
    readonly retryBudget: number;
    /** Requests of at least this many bytes go on their instance's bulk lane when it has one; 0: no lanes. */
    readonly bulkLaneBytes: number;
  };
  /** OpenTelemetry traces; `otlpEndpoint` undefined: off. */
  readonly tracing: {
    readonly otlpEndpoint?: string;
    readonly serviceName: string;
    readonly sampleRatio: number;
  };
  readonly store: {
    readonly kind: 'embedded' | 'memory' | 'mongodb';
    readonly mongodbUri?: string;
    readonly dataDir: string;
    readonly resultRetentionDays: number;
  };
  readonly limits: {
    readonly defaultRequestsPerSecond: number;
    /** Deepest nesting accepted in caller JSON. */
    readonly jsonMaxDepth: number;
    /** Most objects, arrays and object members in one caller JSON text. */
    readonly jsonMaxMembers: number;
    /** Most array items (all arrays together) in one caller JSON text. */
    readonly jsonMaxArrayItems: number;
    /** Most `params` entries of one ext call (HTTP and gRPC). */
    readonly extMaxParams: number;
    /** Most bytes of one ext call's `params` together (keys and values). */
    readonly extMaxParamBytes: number;
    /** Bytes an account may keep stored (datasets, async task bodies and results). */
    readonly storageBytesPerAccount: number;
    /** Input bytes (HTTP bodies, gRPC client messages) read per second for one account (core/flow/byte-rate.ts). */
    readonly inputBytesPerSecondPerAccount: number;
    /** Streaming calls an account may hold open at once on one gateway. */
    readonly concurrentStreamsPerAccount: number;
    /** Bytes of billing records the in-memory ledger keeps. */
    readonly billingLedgerBytes: number;
    /** With MongoDB: the per-account rate holds across every gateway on the database. */
    readonly shared: boolean;
    /** Requests of one account waiting at once for an instance to connect. */
    readonly instanceWaitersPerAccount: number;
  };
  readonly accounts: readonly AccountConfig[];
  readonly apiKeys: readonly ApiKeyConfig[];
  readonly services: readonly ServiceConfig[];
  readonly registry: {
    readonly providers: readonly RegistryProviderConfig[];
    readonly models: readonly RegistryModelConfig[];
    /** Absolute paths of registry files (schemas/registry/registry-file.schema.json), read at boot. */
    readonly files: readonly string[];
  };
  readonly plugins: {
    readonly enabled: readonly string[];
    readonly custom: readonly CustomPluginConfig[];
    readonly options: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  };
  readonly launch: readonly LaunchConfig[];
  /** Run-time accounts, people, keys and services (core/userspace/, docs/user-space.md). */
  readonly userSpace: UserSpaceConfig;
  /** Directory relative paths in the config were resolved against. */
  readonly baseDir: string;
}
