/**
 * `server.workers`: how many gateway processes run on this host, and which configurations may run
 * more than one. The embedded store (the default) and MongoDB are shared by every worker. With the
 * memory store each worker has its own memory, so state a later request must find (an async task, a
 * dataset, a usage count) would be in one worker and the request in another: such configurations are
 * refused at boot rather than answering 404s at random.
 */
import { availableParallelism } from 'node:os';
import { keepsState, statelessSetting } from '../plugins/manifest.js';

/** `auto` is one worker per core the process may use; a number is taken as given. */
export function resolveWorkers(value: number | 'auto' | undefined): number {
  if (value === 'auto') return Math.max(1, availableParallelism());
  return value ?? 1;
}

/** `GATEWAY_WORKERS` as the schema expects it: `auto`, else a number (the schema rejects the rest). */
export function workersFromEnv(value: string): number | string {
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** The first worker's own gRPC port (worker i's is this + i); 0 when they take free ports. */
export function workerPortBase(server: { grpcPort: number; workerGrpcPort?: number | undefined }): number {
  return server.workerGrpcPort ?? (server.grpcPort ? server.grpcPort + 1 : 0);
}

export interface WorkersInput {
  workers: number;
  storeKind: string;
  enabledPlugins: readonly string[];
  /** `plugins.options`, as written (validated later by each plugin). */
  pluginOptions?: Readonly<Record<string, unknown>>;
  customPlugins: readonly { enabled: boolean }[];
  clusterServers: readonly string[];
  httpPort: number;
  grpcPort: number;
  workerGrpcPort?: number;
}

/** Why this configuration cannot run with several workers (none with one worker). */
export function workersProblems(input: WorkersInput): string[] {
  if (input.workers <= 1) return [];
  const problems: string[] = [];
  if (input.storeKind === 'memory') {
    // Each plugin says whether it keeps state, and which option (if any) makes it stateless (its plugin.json).
    const stateful = input.enabledPlugins.filter((name) => keepsState(name, input.pluginOptions?.[name]));
    if (input.customPlugins.some((p) => p.enabled)) stateful.push('custom plugins');
    if (stateful.length) {
      const settings = stateful.flatMap((name) => statelessSetting(name) ?? []);
      problems.push(
        `server.workers is ${input.workers} with store.kind memory: the state of ${stateful.join(', ')} would live in one worker's memory ` +
          `and requests reach any worker (results, datasets and stored responses lost at random); use MongoDB (store.kind: mongodb, or MONGODB_URI) ` +
          `or the embedded store (store.kind: embedded, the default), ` +
          `or server.workers: 1 (GATEWAY_WORKERS=1), or enable only stateless plugins` +
          (settings.length ? ` (or set ${settings.join(', ')})` : ''),
      );
    }
  }
  // Worker i's own port is base + i: the range must be ports, and not the shared ones.
  const base = workerPortBase(input);
  if (base) {
    const last = base + input.workers - 1;
    if (last > 65535) problems.push(`server.workerGrpcPort: the workers' own gRPC ports ${base}-${last} go past 65535`);
    for (const [name, port] of [
      ['httpPort', input.httpPort],
      ['grpcPort', input.grpcPort],
    ] as const) {
      if (port >= base && port <= last)
        problems.push(
          `server.${name} ${port} is one of the workers' own gRPC ports ${base}-${last} (server.workerGrpcPort + worker index)`,
        );
    }
  }
  if (input.clusterServers.length > 1) {
    problems.push(
      'server.workers above 1 cannot be combined with gate.servers (a cluster of several hosts) yet: run one worker per host there',
    );
  }
  return problems;
}
