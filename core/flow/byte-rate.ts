/**
 * A rate of bytes read, as a token bucket holding one second's worth: `charge` takes bytes just read
 * and says how long the reader should pause before reading more (0 while the rate holds). The bytes
 * were still read: the pause is what slows the sender, since a paused stream stops taking bytes off
 * its socket (TCP) or returning flow-control credit (HTTP/2), so the sender waits instead of the
 * gateway buffering and parsing at full speed.
 */
export class ByteRate {
  readonly perSecond: number;
  #tokens: number;
  #refilledAt = performance.now();

  constructor(perSecond: number) {
    this.perSecond = perSecond;
    this.#tokens = perSecond;
  }

  charge(bytes: number): number {
    if (bytes === 0 || this.perSecond === Infinity) return 0;
    this.#refill();
    this.#tokens -= bytes;
    if (this.#tokens >= 0) return 0;
    // Past the rate the reader pauses until an eighth of a second's worth is available again, not just
    // the debt: paused only until the debt was paid, a paced stream paused and resumed once per 16 KiB
    // chunk (a timer, a pause, a resume and an HTTP/2 window update each), and a 4 MiB gRPC call read at
    // 8 MiB/s cost the gateway 140-200 ms of CPU against 51 ms unpaced (the hostile bench's grpc-ext-max).
    return Math.ceil(((-this.#tokens + this.perSecond * RESUME_AFTER_SECONDS) / this.perSecond) * 1000);
  }

  /** How long until the bytes already charged are paid for (0 when they are): a reader's wait before it reads at all. */
  owedMs(): number {
    if (this.perSecond === Infinity) return 0;
    this.#refill();
    return this.#tokens >= 0 ? 0 : this.timeMs(-this.#tokens);
  }

  /** How long `bytes` take at this rate, charging nothing. */
  timeMs(bytes: number): number {
    return this.perSecond === Infinity ? 0 : Math.ceil((bytes / this.perSecond) * 1000);
  }

  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.perSecond, this.#tokens + ((now - this.#refilledAt) / 1000) * this.perSecond);
    this.#refilledAt = now;
  }
}

/** A paced reader's pause lasts until this much of a second's worth is available: it reads in a few batches a second. */
const RESUME_AFTER_SECONDS = 1 / 8;

/**
 * One body's or call's charge to its account's input rate: called with bytes just read, it says how
 * long to pause before reading more; `owed()` says how long the account must wait before any of its
 * input is read, free bytes included (its earlier bodies, or a refused body's announced rest, charged
 * past what it has paid for).
 */
export interface InputCharge {
  (bytes: number): number;
  owed(): number;
}

/**
 * `limits.inputBytesPerSecondPerAccount`: the bytes of input (HTTP request bodies, gRPC client
 * messages) read per second for each account, so that one tenant's large bodies wait on its own
 * budget instead of taking the event loop from every other account (issue 25: an authenticated
 * attacker sending maximal ext maps and 30 MB Responses bodies took another account's chat p99 from
 * 2.55 to 131 ms). An account's own `inputBytesPerSecond` (`ownRate`, read at each charge so that a
 * change applies at once) replaces the default. Accounts come from the config and the store, so the
 * map is bounded by them.
 */
export class AccountInputRate {
  readonly perSecond: number;
  readonly #ownRate: (accountId: number) => number | undefined;
  readonly #rates = new Map<number, ByteRate>();

  constructor(perSecond: number, ownRate: (accountId: number) => number | undefined = () => undefined) {
    this.perSecond = perSecond;
    this.#ownRate = ownRate;
  }

  /** Charges `bytes` just read for `accountId`; ms to pause its reader before reading more. */
  charge(accountId: number, bytes: number): number {
    return this.#rateOf(accountId).charge(bytes);
  }

  /** The account's bucket, replaced (full) when its rate was changed. */
  #rateOf(accountId: number): ByteRate {
    const perSecond = this.#ownRate(accountId) ?? this.perSecond;
    let rate = this.#rates.get(accountId);
    if (!rate || rate.perSecond !== perSecond) this.#rates.set(accountId, (rate = new ByteRate(perSecond)));
    return rate;
  }

  /**
   * The charge of one body or call of `accountId`, whose first FREE_INPUT_BYTES are free: a small
   * request costs nothing here (the account's request rate bounds those), so a tenant sending many
   * small requests is never slowed by its bytes, only one sending large ones.
   */
  chargeOf(accountId: number): InputCharge {
    let seen = 0;
    const charge = (bytes: number) => {
      const counted = Math.max(0, seen + bytes - FREE_INPUT_BYTES) - Math.max(0, seen - FREE_INPUT_BYTES);
      seen += bytes;
      return counted > 0 ? this.charge(accountId, counted) : 0;
    };
    return Object.assign(charge, { owed: () => this.#rateOf(accountId).owedMs() });
  }
}

/** Bytes of each HTTP body or gRPC client call not charged to its account's input rate (as the unauthenticated rate frees each message's first 16 KiB). */
export const FREE_INPUT_BYTES = 16 * 1024;

/** What a pacer pauses: a request, an HTTP/2 stream. */
interface Pausable {
  pause(): unknown;
  resume(): unknown;
  readonly destroyed: boolean;
}

/**
 * Bytes an HTTP body's paced reader takes in one run of the event loop: past them it pauses until the
 * loop's next turn, even while its rate holds. Whatever a socket has ready is read in one go (libuv
 * reads up to 2 MiB per wake-up), and each chunk is parsed and scanned as it comes (the JSON shape
 * scan, core/validation/json.ts): an account whose rate bucket was full (one second's worth, 8 MiB by
 * default) had its 30 MB Responses body's first 1.2 MB scanned in one run, and other accounts'
 * answers waited 6-21 ms behind it (the hostile bench's rotating attacker). gRPC messages keep no such
 * bound: HTTP/2 flow control already hands them over 64 KiB at a time, and a large one is read at once
 * on purpose (core/grpc/unauthenticated-bytes.ts).
 */
export const TURN_BYTES = 256 * 1024;

/**
 * Reads of one stream paced by a rate: `took(bytes)` charges what was just read (`charge` says how
 * long to pause, ByteRate.charge or AccountInputRate.charge) and pauses the stream that long, once
 * at a time; every `turnBytes` read at once, it pauses until the event loop's next turn.
 */
export class StreamPacer {
  #timer: NodeJS.Timeout | undefined;
  #turn: NodeJS.Immediate | undefined;
  #sinceTurn = 0;

  constructor(
    private readonly stream: Pausable,
    private readonly charge: (bytes: number) => number,
    private readonly turnBytes = Infinity,
  ) {}

  took(bytes: number): void {
    this.#sinceTurn += bytes;
    const waitMs = this.charge(bytes);
    if (waitMs > 0) this.hold(waitMs);
    else if (this.#sinceTurn >= this.turnBytes) this.#waitForNextTurn();
  }

  #waitForNextTurn(): void {
    if (this.#timer || this.#turn) return;
    this.#sinceTurn = 0;
    this.stream.pause();
    this.#turn = setImmediate(() => {
      this.#turn = undefined;
      if (!this.stream.destroyed) this.stream.resume();
    });
  }

  /** Pauses the stream for `waitMs` (unless it is paused by this pacer's timer already). */
  hold(waitMs: number): void {
    if (waitMs <= 0 || this.#timer) return;
    // The timer resumes the stream instead of the next turn.
    clearImmediate(this.#turn);
    this.#turn = undefined;
    this.#sinceTurn = 0;
    this.stream.pause();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.stream.destroyed) this.stream.resume();
    }, waitMs);
  }

  /** Stops pacing; `resume`: and resumes the stream if this pacer had paused it. */
  stop(resume = false): void {
    const paused = this.#timer !== undefined || this.#turn !== undefined;
    clearTimeout(this.#timer);
    clearImmediate(this.#turn);
    this.#timer = undefined;
    this.#turn = undefined;
    if (paused && resume && !this.stream.destroyed) this.stream.resume();
  }
}
