/**
 * Failed sign-ins counted per address and per email in one-minute windows, on this gateway: past
 * `limit` failures either one answers 429 SIGN_IN_RATE_LIMITED before the password is even checked, so
 * guessing is slow whichever is spread (many emails from one address, or one email from many). Bounded.
 */
const WINDOW_MS = 60_000;
const MAX_TRACKED = 100_000;

export class LoginThrottle {
  readonly #limit: number;
  readonly #failures = new Map<string, { count: number; since: number }>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Whether any of `subjects` is over its failures in the current window. */
  blocked(subjects: readonly string[], now = Date.now()): boolean {
    return subjects.some((s) => {
      const entry = this.#failures.get(s);
      return entry !== undefined && now - entry.since < WINDOW_MS && entry.count >= this.#limit;
    });
  }

  fail(subjects: readonly string[], now = Date.now()): void {
    for (const subject of subjects) {
      const entry = this.#failures.get(subject);
      if (entry && now - entry.since < WINDOW_MS) entry.count++;
      else this.#failures.set(subject, { count: 1, since: now });
    }
    if (this.#failures.size > MAX_TRACKED) this.#prune(now);
  }

  /** A success clears the email's count (not the address's: one good account must not reset guessing). */
  succeed(subject: string): void {
    this.#failures.delete(subject);
  }

  #prune(now: number): void {
    for (const [subject, entry] of this.#failures) if (now - entry.since >= WINDOW_MS) this.#failures.delete(subject);
    // Still full of live windows: the oldest go first (insertion order).
    for (const subject of this.#failures.keys()) {
      if (this.#failures.size <= MAX_TRACKED) break;
      this.#failures.delete(subject);
    }
  }
}
