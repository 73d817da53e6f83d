/**
 * The heartbeat rule both ends of a `processAsync` stream keep: a peer silent for 3 intervals plus
 * a grace (1 s unless configured) has gone, and its stream is dropped (docs/design.md, decisions).
 */
export function silenceLimitMs(intervalMs: number, graceMs = 1000): number {
  return 3 * intervalMs + graceMs;
}

/**
 * How long the peer has been silent, counting only the time this process could have heard it.
 *
 * A stalled event loop (a long GC, a starved CPU, a paused VM) runs its overdue timers before it reads
 * the sockets: a bare `now - lastHeard` then blames the peer for the stall and drops a stream whose
 * heartbeats are sitting unread in the socket (and, when both ends share the process, that were never
 * sent because the stall stopped both). So a check that comes late does not count its lateness: the
 * silence grows by at most one interval per check, and a peer that really went away is still found
 * after the same number of checks.
 */
export class PeerSilence {
  #lastHeard: number;
  #lastCheck: number;

  /** `checkEveryMs`: how often `check` is called (the heartbeat interval). */
  constructor(
    private readonly checkEveryMs: number,
    now = Date.now(),
  ) {
    this.#lastHeard = now;
    this.#lastCheck = now;
  }

  /** A message came from the peer. */
  heard(now = Date.now()): void {
    this.#lastHeard = now;
  }

  /** The silence so far, in ms, less the time this process was itself stalled since the last check. */
  check(now = Date.now()): number {
    const late = now - this.#lastCheck - this.checkEveryMs;
    this.#lastCheck = now;
    if (late > 0) this.#lastHeard = Math.min(now, this.#lastHeard + late);
    return now - this.#lastHeard;
  }
}
