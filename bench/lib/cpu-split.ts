/**
 * The hostile scenario's CPU split: the servers under test (our gateway and its echo service) on one
 * CPU (on 2 or 3 CPUs; from 4 CPUs on, each server on a CPU of its own), the clients (the harness
 * with its load generator, and the attackers) on the others, with the attackers at the lowest
 * priority (`nice 19`) there. On a 2-core machine the attacker's own CPU (building and sending
 * 15-30 MB bodies) otherwise lands on the cores the gateway and the victim's load generator use, and
 * the victim's p99 measured its client's CPU, not the gateway. The split is the
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

/** Where each server and the clients go on `count` CPUs (taskset lists), for `count` ≥ 2. */
export function cpuPlacement(count: number, serverCount: number): { servers: string[]; clients: string } {
  // From 4 CPUs on (2 servers) each server has a CPU of its own and at least two stay with the
  // clients, so the load generator and the attackers are not crowded onto one.
  const ownCpus = count - serverCount >= 2;
  const firstClient = ownCpus ? serverCount : 1;
  return {
    servers: Array.from({ length: serverCount }, (_, index) => String(ownCpus ? index : 0)),
    clients: firstClient === count - 1 ? String(firstClient) : `${firstClient}-${count - 1}`,
  };
}

/**
 * Places the servers (`pids`, by name) as cpuPlacement says, and this process (the load generator,
 * and the children it starts from now on) on the clients' CPUs.
 */
export function splitCpus(pids: Readonly<Record<string, number>>): CpuSplit {
  const count = availableParallelism();
  const all = `0-${count - 1}`;
  if (process.platform !== 'linux' || count < 2 || !has('taskset') || !has('nice')) {
    return {
      description: `none: needs Linux, taskset, nice and 2 CPUs (${count} CPUs here)`,
      attackerPrefix: [],
      restore: () => undefined,
    };
  }
  const named = Object.entries(pids);
  const placement = cpuPlacement(count, named.length);
  const { clients } = placement;
  const servers = named.map(([name, pid], index) => ({ name, pid, cpu: placement.servers[index]! }));
  const pinned = servers.every(({ pid, cpu }) => pin(pid, cpu)) && pin(process.pid, clients);
  const restore = () => {
    for (const pid of [...Object.values(pids), process.pid]) pin(pid, all);
  };
  if (!pinned) {
    restore();
    return { description: 'none: taskset refused', attackerPrefix: [], restore: () => undefined };
  }
  const where = servers.map(({ name, cpu }) => `${name} on CPU ${cpu}`).join(', ');
  return {
    description: `${where}; load generator on CPU ${clients}; attackers on CPU ${clients} at nice 19`,
    attackerPrefix: ['taskset', '-c', clients, 'nice', '-n', '19'],
    restore,
  };
}
