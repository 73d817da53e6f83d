import { hash, timingSafeEqual } from 'node:crypto';

/**
 * API keys and connection tokens are kept only as `sha256:<hex>`. They are long random strings, so a
 * fast digest is enough (no password stretching); comparisons run in constant time.
 */
export function hashSecret(secret: string): string {
  // One-shot digest: half the cost of createHash().update().digest(), and it runs on every request.
  return `sha256:${hash('sha256', secret, 'hex')}`;
}

/** Constant-time equality of two `sha256:<hex>` strings of the same algorithm. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * A lookup table from secret hash to an entry. The candidate is digested before the lookup, so the
 * table is probed with a value an attacker cannot steer byte by byte; the final check is constant-time.
 */
export class SecretIndex<T> {
  readonly #byHash = new Map<string, { hash: string; entry: T }>();

  add(hash: string, entry: T): void {
    this.#byHash.set(hash, { hash, entry });
  }

  delete(hash: string): void {
    this.#byHash.delete(hash);
  }

  find(candidate: string): T | undefined {
    const hash = hashSecret(candidate);
    const found = this.#byHash.get(hash);
    return found && hashesEqual(found.hash, hash) ? found.entry : undefined;
  }
}
