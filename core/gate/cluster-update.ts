/**
 * The `cluster` message a newly registered service stream gets, if any. The SDKs converge their
 * connection pool to exactly `servers` and rename the receiving connection to `currentServer`, so
 * `currentServer` must be the address the service dialled and `servers` must include it; with a
 * single gateway nothing is sent (shared/reference/service-protocol.md, section 8 item 8).
 */
import type { ClusterUpdateProto } from '../../proto/src/index.js';

/** The update for a stream that dialled `dialled` (the call's `:authority`, `host:port`). */
export type ClusterUpdateFor = (dialled: string) => ClusterUpdateProto | undefined;

/** Several gateway hosts listed in `gate.servers`: the same list for every stream. */
export function configuredCluster(servers: readonly string[], currentServer: string | undefined): ClusterUpdateFor {
  return () => (servers.length > 1 && currentServer ? { servers: [...servers], currentServer } : undefined);
}

export interface WorkerTopology {
  /** This worker's index. */
  index: number;
  /** The gRPC port every worker shares (the kernel hands each connection to one of them). */
  sharedPort: number;
  /** Each worker's own gRPC port, by index. */
  ownPorts: readonly number[];
}

/**
 * Workers of one host. A stream on a worker's own port is told every worker's own port: one
 * connection per worker. A stream on the shared port reached this worker, but which one is the
 * kernel's choice, so it is told its own address plus the other workers' own ports; the first of
 * those connections is then told the own-port list, and the SDK closes the shared-port connection
 * in favour of this worker's own port. The host is the one the service dialled: it reached this
 * machine by that name (the listen address may be 0.0.0.0). An authority we cannot read (a proxy
 * rewrote it) gets no update: the service stays on the one worker it reached.
 */
export function workerCluster(topology: WorkerTopology): ClusterUpdateFor {
  return (dialled) => {
    const parsed = splitHostPort(dialled);
    if (!parsed || topology.ownPorts.length < 2) return undefined;
    const at = (port: number) => `${parsed.host}:${port}`;
    if (parsed.port === topology.ownPorts[topology.index]) {
      return { servers: topology.ownPorts.map(at), currentServer: dialled };
    }
    if (parsed.port === topology.sharedPort) {
      const others = topology.ownPorts.filter((_, i) => i !== topology.index).map(at);
      return { servers: [dialled, ...others], currentServer: dialled };
    }
    return undefined;
  };
}

/** `host:port` or `[v6]:port`; undefined without a numeric port. */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address.trim());
  if (!match) return undefined;
  return { host: match[1]!, port: Number(match[2]) };
}
