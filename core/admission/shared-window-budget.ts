import { isDuplicateKey, type Collection, type CollectionSpec } from '../storage/port.js';
import { every } from '../flow/timers.js';

/** One window's budget document: how much of `limit` the gateways have leased so far. */
export interface WindowDoc {
  _id: string;
  taken: number;
  /** Window start (epoch ms), for the sweep of old windows (every home: no TTL index needed). */
  windowStart: number;
}

/** The collection of limit windows: one small document per key and window. */
export const limitWindows = (name: string): CollectionSpec => ({ name, indexes: [{ name: 'windowStart', fields: ['windowStart'] }] });

export interface SharedWindowBudgetOptions {
  /** The collection holding one document per key and window (`limitWindows`), on the store port. */
  collection: Collection<WindowDoc>;
  /** Window length: 1000 for a per-second rate; quotas may use minutes or days. */
  windowMs: number;
  /** Part of a window's limit leased at a time (default 10%, at least 1). */
  leaseFraction?: number;
  /**
   * Windows that are not `windowMs` long (calendar months, or one window forever): the index of an
   * instant's window, and the start of a window. `windowMs` then only sizes the sweep of old windows
   * (Infinity: none). Called on every take: allocate nothing.
   */
  windows?: { indexOf(now: number): number; startOf(index: number): number };
  /**
   * Spend ahead of the first lease of a window this gateway knows nothing of (default true: fine for a
   * per-second rate; a budget says false, and only the one request that starts the lease goes ahead blind).
   */
  borrowAtStart?: boolean;
  /** Warnings (the store unreachable); decisions go on from what is leased already. */
  warn?: (message: string, err: unknown) => void;
  now?: () => number;
}

/** What one gateway holds of one key's budget in the current window. */
interface Holding {
  window: number;
  limit: number;
  /** Leased and not used yet; below zero while units are spent ahead of a lease under way. */
  tokens: number;
  /** How far `tokens` may go below zero while a lease is under way (0: wait for it). */
  mayBorrow: number;
  /** A lease request is under way. */
  leasing: boolean;
  /** The store said the window's budget is gone: no further lease this window. */
  exhausted: boolean;
  /** When this gateway last used the key (for returning idle leftovers). */
  lastUsed: number;
  /** When the store last said the budget was gone (a lease is tried again a second later: others may give back). */
  exhaustedAt: number;
  /**
   * One check may pass while nothing is held and a lease is under way (`hasLeft`): at a window's start,
   * and again after each lease that left some budget; so a check never waits, and each gateway goes at
   * most one request past what it leased.
   */
  mayGoBlind: boolean;
  /**
   * The window's budget left after this gateway's last lease (the limit before one): the next lease's
   * answer then tells what the other gateways took meanwhile.
   */
  remainingSeen: number;
  /** The mean amount one `spend` counts (sizes leases to the work's size; 0 for one-unit takes). */
  meanSpend: number;
  /** Units used in this window, and in the one before (sizes the leases to this gateway's traffic). */
  used: number;
  usedBefore: number;
}

/** How long a gateway told that a window's budget is gone waits before asking again. */
const EXHAUSTED_RETRY_MS = 1000;

/** How often leftovers of keys this gateway stopped using go back to the shared budget. */
const RETURN_IDLE_MS = 250;

/**
 * A limit per key and time window shared by every gateway on one store (MongoDB, or the workers of one
 * host on the embedded store), decided without a
 * database round trip per request: each gateway leases a share of the window's budget (one atomic
 * conditional `$inc` on the window's document) and spends it locally; it leases the next share
 * before the current one runs out, sized to its own traffic, and gives back what it holds for a key
 * it stopped using. It spends up to one share ahead of a lease under way, so that the store's round
 * trip does not turn into refusals below the limit, only at a window's start, after giving back an
 * idle share, or while more than half the window's budget was left at its last lease (enough of it
 * whatever the others took meanwhile); near the end of the budget it spends only what it leased,
 * which keeps every gateway together within the limit. Usable for any count per window: requests
 * per second now, quotas per minute or day later.
 */
export class SharedWindowBudget {
  readonly #collection: Collection<WindowDoc>;
  readonly #windowMs: number;
  readonly #leaseFraction: number;
  readonly #warn: (message: string, err: unknown) => void;
  readonly #now: () => number;
  readonly #windows: { indexOf(now: number): number; startOf(index: number): number };
  readonly #borrowAtStart: boolean;
  readonly #holdings = new Map<string, Holding>();
  readonly #stopReturning: () => void;
  #lastWarning = 0;

  constructor(options: SharedWindowBudgetOptions) {
    this.#collection = options.collection;
    this.#windowMs = options.windowMs;
    this.#leaseFraction = options.leaseFraction ?? 0.1;
    const warn = options.warn ?? (() => {});
    // At most one warning a minute: an unreachable store would otherwise warn on every lease.
    this.#warn = (message, err) => {
      if (this.#now() - this.#lastWarning < 60_000) return;
      this.#lastWarning = this.#now();
      warn(message, err);
    };
    this.#now = options.now ?? Date.now;
    const windowMs = this.#windowMs;
    this.#windows = options.windows ?? { indexOf: (now) => Math.floor(now / windowMs), startOf: (index) => index * windowMs };
    this.#borrowAtStart = options.borrowAtStart ?? true;
    this.#stopReturning = every(RETURN_IDLE_MS, () => this.#returnIdle());
  }

  /** Takes one unit of `key`'s budget of `limit` per window; false when the window's budget is spent. */
  tryTake(key: string, limit: number): boolean {
    const holding = this.#holding(key, limit);
    const canSpend = holding.tokens >= 1 || (holding.leasing && holding.tokens - 1 >= -holding.mayBorrow);
    if (!canSpend) return false;
    holding.tokens -= 1;
    holding.used += 1;
    return true;
  }

  /**
   * Whether `key` has some of its budget of `limit` left this window (a budget checked before the work,
   * whose actual amount is known only after it: `spend`). Leases the next share when this gateway's runs low.
   */
  hasLeft(key: string, limit: number): boolean {
    const holding = this.#holding(key, limit);
    if (holding.tokens > 0) return true;
    if (holding.leasing && holding.tokens > -holding.mayBorrow) return true;
    if (holding.leasing && holding.mayGoBlind) {
      holding.mayGoBlind = false;
      return true;
    }
    return false;
  }

  /** Counts `amount` units as spent (after the work; it may go past what is leased, which the next lease covers). */
  spend(key: string, limit: number, amount: number): void {
    if (!(amount > 0)) return;
    const holding = this.#holding(key, limit);
    holding.meanSpend = holding.meanSpend === 0 ? amount : 0.8 * holding.meanSpend + 0.2 * amount;
    holding.tokens -= amount;
    holding.used += amount;
    if (!holding.exhausted && holding.tokens <= this.#share(holding)) this.#lease(key, holding);
  }

  /** This window's holding of `key`, leasing the next share when little is left. */
  #holding(key: string, limit: number): Holding {
    const now = this.#now();
    const window = this.#windows.indexOf(now);
    let holding = this.#holdings.get(key);
    if (!holding || holding.window !== window || holding.limit !== limit) {
      const before = holding && holding.window === window - 1 ? holding : undefined;
      const usedBefore = before ? before.used : 0;
      // Nothing is known of the new window yet: at its start every gateway's first share fits (a budget
      // borrows only when this gateway held the window before, whose budget was then fresh too).
      const mayBorrow = this.#borrowAtStart || before ? this.#minShare(limit) : 0;
      holding = {
        window,
        limit,
        tokens: 0,
        mayBorrow,
        leasing: false,
        exhausted: false,
        exhaustedAt: 0,
        mayGoBlind: true,
        remainingSeen: limit,
        meanSpend: before?.meanSpend ?? 0,
        lastUsed: now,
        used: 0,
        usedBefore,
      };
      this.#holdings.set(key, holding);
    }
    holding.lastUsed = now;
    // Others may have given back what they held: try again a second after the store said none was left.
    if (holding.exhausted && now - holding.exhaustedAt >= EXHAUSTED_RETRY_MS) holding.exhausted = false;
    // Lease the next share while a whole one is left, so steady traffic does not wait for it.
    if (!holding.exhausted && holding.tokens - 1 <= this.#share(holding)) this.#lease(key, holding);
    return holding;
  }

  close(): void {
    this.#stopReturning();
  }

  /** The smallest lease: a fixed part of the limit. */
  #minShare(limit: number): number {
    return Math.max(1, Math.floor(limit * this.#leaseFraction));
  }

  /**
   * A lease sized to this gateway's traffic: a quarter of what it used last window, and at least two
   * spends of the mean size (`spend`), within [min, limit/4].
   */
  #share(holding: Holding): number {
    const min = this.#minShare(holding.limit);
    const wanted = Math.max(Math.ceil(holding.usedBefore / 4), Math.ceil(2 * holding.meanSpend));
    return Math.max(min, Math.min(wanted, Math.floor(holding.limit / 4)));
  }

  #docId(key: string, window: number): string {
    return `${key}:${window}`;
  }

  /** Leases one share, plus what was spent ahead of leases, of the window's budget. */
  #lease(key: string, holding: Holding): void {
    if (holding.leasing) return;
    holding.leasing = true;
    const share = this.#share(holding);
    const amount = share + Math.max(0, -holding.tokens);
    const done = (granted: number, remaining: number) => {
      holding.leasing = false;
      holding.tokens += granted;
      if (remaining > 0) holding.mayGoBlind = true;
      if (granted < amount) {
        holding.exhausted = true;
        holding.exhaustedAt = this.#now();
      }
      // Spend ahead of the next lease only while more than half the window's budget is left, and enough
      // of it even if the other gateways take twice what they took during this lease before the next
      // lands: they spend ahead too, and a debt the next lease cannot cover goes past the limit (three
      // gateways went 5 past 40 at a window's end when the first rule alone held).
      const othersTook = Math.max(0, holding.remainingSeen - granted - remaining);
      holding.remainingSeen = remaining;
      holding.mayBorrow = remaining - 2 * othersTook >= Math.max(3 * share, holding.limit / 2) ? share : 0;
    };
    this.#take(this.#docId(key, holding.window), this.#windows.startOf(holding.window), holding.limit, amount).then(
      ({ granted, remaining }) => done(granted, remaining),
      (err: unknown) => {
        // The store is unreachable: this gateway alone allows up to the whole limit this window (what
        // a gateway without a shared store does) rather than refusing everyone.
        this.#warn('shared limit: lease failed; limiting this gateway on its own', err);
        const grantedHere = holding.used + holding.tokens;
        done(Math.max(0, Math.min(amount, holding.limit - grantedHere)), 0);
      },
    );
  }

  /**
   * Atomically adds up to `amount` to the window's `taken`, never past `limit`; resolves with what
   * was added and what is left of the window's budget after it.
   */
  async #take(id: string, windowStart: number, limit: number, amount: number): Promise<{ granted: number; remaining: number }> {
    let remaining = limit;
    for (let attempt = 0; attempt < 3 && amount > 0; attempt++) {
      try {
        const updated = await this.#collection.findOneAndUpdate(
          { _id: id, taken: { $lte: limit - amount } },
          { $inc: { taken: amount }, $setOnInsert: { windowStart } },
          { upsert: true, returnDocument: 'after' },
        );
        if (updated) return { granted: amount, remaining: limit - updated.taken };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      // The document exists with too little left for `amount`: lease what is left instead.
      const doc = await this.#collection.get(id);
      remaining = limit - (doc?.taken ?? 0);
      amount = Math.min(amount, remaining);
    }
    return { granted: 0, remaining: Math.max(0, remaining) };
  }

  /** Gives back what this gateway holds for keys it has not used lately, and sweeps old windows. */
  async #returnIdle(): Promise<void> {
    const now = this.#now();
    const window = this.#windows.indexOf(now);
    for (const [key, holding] of this.#holdings) {
      // The last window's holding is kept: it sizes this window's leases.
      if (holding.window < window - 1) this.#holdings.delete(key);
      if (holding.window !== window) continue;
      if (now - holding.lastUsed < RETURN_IDLE_MS || holding.leasing || holding.tokens < 1) continue;
      const amount = Math.floor(holding.tokens);
      holding.tokens -= amount;
      // Its next request may spend ahead of the lease it starts, as at a window's start, up to what it gave back.
      holding.mayBorrow = Math.min(this.#minShare(holding.limit), amount);
      holding.exhausted = false;
      try {
        await this.#collection.updateMany({ _id: this.#docId(key, window) }, { $inc: { taken: -amount } });
      } catch (err) {
        this.#warn('shared limit: unused share not returned', err);
      }
    }
    if (window % 20 === 0 && Number.isFinite(this.#windowMs)) {
      await this.#collection.deleteMany({ windowStart: { $lt: now - 10 * this.#windowMs } }).catch(() => undefined);
    }
  }
}
