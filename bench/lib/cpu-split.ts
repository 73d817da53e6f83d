/**
 * The hostile scenario's CPU split: the servers under test (our gateway and its echo service) on one
 * CPU, the clients (the harness with its load generator, and the attackers) on the others, with the
 * attackers at the lowest priority (`nice 19`) there. On a 2-core machine the attacker's own CPU
 * (building and sending 15-30 MB bodies) otherwise lands on the cores the gateway and the victim's load
 * generator use, and the victim's p99 measured its client's CPU, not the gateway. The split is the
 * same for the run without the attacker and the run with it, so the ratio compares like with like.
 * Needs Linux's `taskset` and `nice` and at least 2 CPUs; without them nothing is pinned (and the
 * results say so).
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

export interface CpuSplit {
  /** How the processes were placed, for the results (`none: …` when they were not). */
  readonly description: string;
  /** A command prefix that starts a client process on the client CPUs at the lowest priority. */
  readonly attackerPrefix: string[];
  /** Gives every process its CPUs back (all of them). */
  restore(): void;
}

const has = (command: string) => spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;

/** Pins every thread of `pid` to `cpus` (a taskset list); false when it could not. */
function pin(pid: number, cpus: string): boolean {
  return spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' }).status === 0;
}

/** Places `servers` on CPU 0 and this process (the load generator, and the children it starts from now on) on the rest. */
export function splitCpus(servers: readonly number[]): CpuSplit {
  const count = availableParallelism();
  const all = `0-${count - 1}`;
  if (process.platform !== 'linux' || count < 2 || !has('taskset') || !has('nice')) {
    return {
      description: `none: needs Linux, taskset, nice and 2 CPUs (${count} CPUs here)`,
      attackerPrefix: [],
      restore: () => undefined,
    };
  }
  const clients = count === 2 ? '1' : `1-${count - 1}`;
  const pinned = servers.every((pid) => pin(pid, '0')) && pin(process.pid, clients);
  const restore = () => {
    for (const pid of [...servers, process.pid]) pin(pid, all);
  };
  if (!pinned) {
    restore();
    return { description: 'none: taskset refused', attackerPrefix: [], restore: () => undefined };
  }
  return {
    description: `gateway and echo service on CPU 0; load generator on CPU ${clients}; attackers on CPU ${clients} at nice 19`,
    attackerPrefix: ['taskset', '-c', clients, 'nice', '-n', '19'],
    restore,
  };
}
