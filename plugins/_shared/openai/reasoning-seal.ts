/**
 * The engine's reasoning, handed to callers in a form only this gateway can vouch for: Messages
 * `thinking` blocks carry a `signature`, Responses `reasoning` items an `encrypted_content`, both an
 * HMAC-SHA256 of the text under the gateway's secret. On a later turn a block or item whose signature
 * verifies goes back to the engine as its reasoning input; one that does not (another provider's, or
 * edited) is left out, never an error. The secret comes from the environment variable the adapter's
 * `reasoningSecretEnv` option names; without it a random one per process (signatures then do not
 * survive a restart, and several workers need the variable).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'gw1.';
/** Reasoning longer than this is not sealed (the whole text travels inside encrypted_content). */
const MAX_SEALED = 4 * 1024 * 1024;

export const DEFAULT_REASONING_SECRET_ENV = 'GATEWAY_REASONING_SECRET';

export class ReasoningSeal {
  readonly #key: Buffer;

  constructor(secret: string | undefined) {
    this.#key = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  }

  /** The signature of a thinking block's text. */
  sign(text: string): string {
    return PREFIX + createHmac('sha256', this.#key).update(text).digest('base64url');
  }

  verify(text: string, signature: unknown): boolean {
    if (typeof signature !== 'string' || !signature.startsWith(PREFIX)) return false;
    const want = Buffer.from(this.sign(text));
    const got = Buffer.from(signature);
    return want.length === got.length && timingSafeEqual(want, got);
  }

  /** `encrypted_content` for a reasoning item: the text and its signature, opaque to the caller. */
  seal(text: string): string | undefined {
    if (text.length > MAX_SEALED) return undefined;
    return `${PREFIX}${Buffer.from(text).toString('base64url')}.${this.sign(text).slice(PREFIX.length)}`;
  }

  /** The text of an `encrypted_content` this gateway sealed; undefined for any other. */
  open(sealed: unknown): string | undefined {
    if (typeof sealed !== 'string' || !sealed.startsWith(PREFIX) || sealed.length > MAX_SEALED * 2) return undefined;
    const dot = sealed.indexOf('.', PREFIX.length);
    if (dot < 0) return undefined;
    const text = Buffer.from(sealed.slice(PREFIX.length, dot), 'base64url').toString('utf8');
    return this.verify(text, PREFIX + sealed.slice(dot + 1)) ? text : undefined;
  }
}

/** The reasoning text of a chat message or delta: `reasoning_content` (vLLM, DeepSeek, llama.cpp) or `reasoning`. */
export function reasoningOf(message: Record<string, unknown>): string {
  const value = message.reasoning_content ?? message.reasoning;
  return typeof value === 'string' ? value : '';
}
