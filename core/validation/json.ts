/**
 * JSON-parse-or-400: the one way caller JSON becomes a value. Besides the syntax, it refuses what
 * would make the value the gateway checks differ from what a service reads, or make checking it
 * expensive:
 *
 * - nesting deeper than `maxDepth` (400 JSON_TOO_DEEP): found by a scan of the text before any
 *   object is built, so a 100,000-deep body costs a linear scan, not a stack overflow (500) later;
 * - more than `maxMembers` objects, arrays and object members together, or more than `maxArrayItems`
 *   array items (413 JSON_TOO_MANY_MEMBERS), counted by the same scan: building values is what costs
 *   (JSON.parse of one 14 MB object with 1,000,000 keys held the event loop 4.4 s on a busy 2-core
 *   machine; 1,000,000 numbers in an array took 60 ms, but 15,000,000 of them in a 30 MB body stalled
 *   the gateway long enough to drop a service), so their number is bounded, not only the body's bytes
 *   (issue 25, N1). Objects cost far more than scalars, hence two bounds;
 * - the keys `__proto__`, `constructor` and `prototype`, in any spelling (escapes included): 400
 *   JSON_KEY_FORBIDDEN naming the field. `{"__proto__": {"seed": 5}}` is an own property to
 *   JSON.parse but becomes the prototype in any `Object.assign`, so a check can see a `seed` that
 *   the service never gets;
 * - numbers whose text does not survive a round trip through a double (400 JSON_NUMBER_INEXACT
 *   naming the field): `2.0000000000000000001` checks as 2 against a maximum of 2 but a service with
 *   decimals reads more than 2; `12345678901234567890` checks as 12345678901234567000. A number is
 *   exact when its decimal value is the value of the shortest text of its double (so `1.50`, `1e2`
 *   and `0.1` are fine). Numbers that need more digits go as strings.
 *
 * Everything the gateway forwards as text (predict v2 `config`, raw bodies checked against a data
 * type, chat bodies) therefore says to the service exactly what was validated.
 */
import { gatewayError } from '../errors.js';

/** The nesting limit when the config does not set one (`limits.jsonMaxDepth`). */
export const DEFAULT_JSON_MAX_DEPTH = 128;
/** How many values one JSON text may hold (`limits.jsonMaxMembers`, `limits.jsonMaxArrayItems`). */
export interface JsonSizeLimits {
  /** Objects, arrays and object members together. */
  maxMembers: number;
  /** Items of all arrays together. */
  maxArrayItems: number;
}

/** The bounds when the config does not set them. */
export const DEFAULT_JSON_SIZE_LIMITS: JsonSizeLimits = { maxMembers: 100_000, maxArrayItems: 1_000_000 };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** Shortest and longest text of a forbidden key in quotes, escapes included (`\u005f` is 6 characters). */
const KEY_MIN = 9 + 2;
const KEY_MAX = 11 * 6 + 2;
/** A decimal with at most this many significant digits always survives the round trip (DBL_DIG). */
const SAFE_DIGITS = 15;

type Problem =
  { kind: 'depth' } | { kind: 'members'; limit: number; what: string } | { kind: 'key'; key: string } | { kind: 'number'; text: string };

/**
 * `text` parsed as JSON; `part` names the request part (`data`, `config`) in errors, undefined for
 * a whole body. Throws 400 MALFORMED_JSON, JSON_TOO_DEEP, JSON_KEY_FORBIDDEN or JSON_NUMBER_INEXACT,
 * or 413 JSON_TOO_MANY_MEMBERS.
 */
export function parseJson(
  text: string,
  part?: string,
  maxDepth = DEFAULT_JSON_MAX_DEPTH,
  size: JsonSizeLimits = DEFAULT_JSON_SIZE_LIMITS,
): unknown {
  const param = part ?? 'body';
  const problem = scan(text, maxDepth, size);
  if (problem?.kind === 'depth') throw gatewayError('JSON_TOO_DEEP', { param: part ?? null, args: { param, limit: maxDepth } });
  if (problem?.kind === 'members')
    throw gatewayError('JSON_TOO_MANY_MEMBERS', { param: part ?? null, args: { param, limit: problem.limit, what: problem.what } });
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    throw gatewayError('MALFORMED_JSON', {
      param: part ?? null,
      args: { reason: part === undefined ? (err as Error).message : `${part}: ${(err as Error).message}` },
    });
  }
  if (problem?.kind === 'key') {
    const field = pathOf(value, (k) => k === problem.key, param);
    throw gatewayError('JSON_KEY_FORBIDDEN', { param: field, args: { field, key: problem.key } });
  }
  if (problem?.kind === 'number') {
    const wanted = Number(problem.text);
    const field = pathOf(value, undefined, param, (v) => Object.is(v, wanted));
    throw gatewayError('JSON_NUMBER_INEXACT', { param: field, args: { field, value: problem.text.slice(0, 64) } });
  }
  return value;
}

/** The first problem in the text, or undefined. Invalid JSON scans without complaint: JSON.parse reports it. */
function scan(text: string, maxDepth: number, size: JsonSizeLimits): Problem | undefined {
  let depth = 0;
  let members = 0;
  let arrayItems = 0;
  // Which open containers are arrays, by depth: a comma directly inside one separates its items.
  const inArray = new Uint8Array(maxDepth + 2);
  const tooMany = (limit: number, what: string): Problem => ({ kind: 'members', limit, what });
  let found: Problem | undefined;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (found === undefined && end - i + 1 >= KEY_MIN && end - i + 1 <= KEY_MAX && isKey(text, end + 1)) {
        const token = text.slice(i, end + 1);
        const key = token.includes('\\') ? decodeString(token) : token.slice(1, -1);
        if (key !== undefined && FORBIDDEN_KEYS.has(key)) found = { kind: 'key', key };
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return { kind: 'depth' };
      inArray[depth] = c === 0x5b ? 1 : 0;
      if (++members > size.maxMembers) return tooMany(size.maxMembers, 'JSON objects, arrays and object members');
    } else if (c === 0x3a) {
      // Outside strings a colon ends an object member's key.
      if (++members > size.maxMembers) return tooMany(size.maxMembers, 'JSON objects, arrays and object members');
    } else if (c === 0x2c) {
      if (inArray[depth] === 1 && ++arrayItems >= size.maxArrayItems) return tooMany(size.maxArrayItems, 'array items');
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < n && isNumberChar(text.charCodeAt(end))) end++;
      if (found === undefined) {
        const token = text.slice(i, end);
        if (!isExact(token)) found = { kind: 'number', text: token };
      }
      i = end - 1;
    }
  }
  return found;
}

/** Index of the quote that closes the string opened at `start` (or the text's end). */
function stringEnd(text: string, start: number): number {
  let q = start;
  for (;;) {
    q = text.indexOf('"', q + 1);
    if (q < 0) return text.length - 1;
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
}

function isKey(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a) return true;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return false;
}

function decodeString(token: string): string | undefined {
  try {
    return JSON.parse(token) as string;
  } catch {
    return undefined;
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

/** Whether the number's text has the decimal value of the double JSON.parse makes of it. */
export function isExact(token: string): boolean {
  if (token.length <= SAFE_DIGITS && !/[eE]/.test(token)) return true;
  const fast = significantDigits(token);
  if (fast <= SAFE_DIGITS) {
    // Few digits always round-trip, unless the exponent leaves the double's range.
    const e = token.search(/[eE]/);
    if (e < 0 || Math.abs(Number(token.slice(e + 1))) < 290) return true;
  }
  const value = Number(token);
  if (!Number.isFinite(value)) return false;
  return canonical(token) === canonical(String(value));
}

function significantDigits(token: string): number {
  const e = token.search(/[eE]/);
  const mantissa = (e < 0 ? token : token.slice(0, e)).replace(/[-+.]/g, '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '').length;
}

/** A number's decimal value as `<digits>e<exponent>`, leading and trailing zeros removed; zero is `0`. */
function canonical(token: string): string {
  const negative = token.startsWith('-');
  const body = negative || token.startsWith('+') ? token.slice(1) : token;
  const e = body.search(/[eE]/);
  const mantissa = e < 0 ? body : body.slice(0, e);
  let exponent = e < 0 ? 0 : Number(body.slice(e + 1));
  const dot = mantissa.indexOf('.');
  let digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  if (dot >= 0) exponent -= mantissa.length - dot - 1;
  const lead = digits.length - digits.replace(/^0+/, '').length;
  digits = digits.slice(lead);
  if (digits.length === 0) return '0';
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  return `${negative ? '-' : ''}${trimmed}e${exponent}`;
}

/**
 * The path (`config.a.b`, `data[2]`) of the first place in `value` with a key matching `keyTest` or
 * a value matching `valueTest`; `param` alone when none is found. Only called on the error path; the
 * depth is bounded by the scan.
 */
function pathOf(value: unknown, keyTest: ((k: string) => boolean) | undefined, param: string, valueTest?: (v: unknown) => boolean): string {
  const walk = (v: unknown, path: string): string | undefined => {
    if (valueTest?.(v)) return path;
    if (typeof v !== 'object' || v === null) return undefined;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const hit = walk(v[i], `${path}[${i}]`);
        if (hit !== undefined) return hit;
      }
      return undefined;
    }
    for (const k of Object.keys(v)) {
      const here = path === '' ? k : `${path}.${k}`;
      if (keyTest?.(k)) return here;
      const hit = walk((v as Record<string, unknown>)[k], here);
      if (hit !== undefined) return hit;
    }
    return undefined;
  };
  const found = walk(value, '');
  if (found === undefined || found === '') return param;
  return param === 'body' ? found : `${param}.${found}`.replace('.[', '[');
}

/**
 * The depth and size bounds of `parseJson`, checked on a body's bytes as they arrive: a body over a
 * bound is refused after its first few kilobytes instead of being received whole, joined and decoded
 * (30 MB of small items at a few calls a second kept another account's chat p99 at 1-2 s when each was
 * read whole before the scan refused it). Structural characters are ASCII and never occur inside a
 * UTF-8 sequence, so bytes are scanned as they come. `parseJson` still checks the whole text.
 */
export class JsonShapeCheck {
  #depth = 0;
  #members = 0;
  #arrayItems = 0;
  #inString = false;
  #escaped = false;
  readonly #inArray: Uint8Array;

  constructor(
    private readonly maxDepth: number,
    private readonly size: JsonSizeLimits,
  ) {
    this.#inArray = new Uint8Array(maxDepth + 2);
  }

  /** Takes the next bytes; throws 400 JSON_TOO_DEEP or 413 JSON_TOO_MANY_MEMBERS once they pass a bound. */
  push(chunk: Buffer): void {
    // The state in locals for the loop, written back at the end (a refused body's state is not read again).
    const { maxDepth } = this;
    const { maxMembers, maxArrayItems } = this.size;
    const inArray = this.#inArray;
    let depth = this.#depth;
    let members = this.#members;
    let arrayItems = this.#arrayItems;
    let inString = this.#inString;
    let escaped = this.#escaped;
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (inString) {
        // Short strings byte by byte; a long one's end found with indexOf, many times faster on prose
        // (a body of long texts: 300-400 MB/s byte by byte, 5 GB/s and more so; npm run bench:json-scan).
        const stop = Math.min(n, i + SHORT_STRING);
        while (i < stop) {
          const c = chunk[i]!;
          if (escaped) escaped = false;
          else if (c === 0x5c) escaped = true;
          else if (c === 0x22) break;
          i++;
        }
        if (i < stop) {
          inString = false;
          i++;
        } else if (i < n) {
          const quote = closingQuote(chunk, i, escaped);
          escaped = quote === ENDS_ESCAPED;
          inString = quote < 0;
          i = quote < 0 ? n : quote + 1;
        }
        continue;
      }
      const c = chunk[i++]!;
      if (c === 0x22) {
        inString = true;
      } else if (c === 0x7b || c === 0x5b) {
        if (++depth > maxDepth) throw gatewayError('JSON_TOO_DEEP', { param: null, args: { param: 'body', limit: maxDepth } });
        inArray[depth] = c === 0x5b ? 1 : 0;
        if (++members > maxMembers) throw tooManyMembers(maxMembers, 'JSON objects, arrays and object members');
      } else if (c === 0x7d || c === 0x5d) {
        if (depth > 0) depth--;
      } else if (c === 0x3a) {
        if (++members > maxMembers) throw tooManyMembers(maxMembers, 'JSON objects, arrays and object members');
      } else if (c === 0x2c && inArray[depth] === 1) {
        if (++arrayItems >= maxArrayItems) throw tooManyMembers(maxArrayItems, 'array items');
      }
    }
    this.#depth = depth;
    this.#members = members;
    this.#arrayItems = arrayItems;
    this.#inString = inString;
    this.#escaped = escaped;
  }
}

/** Bytes of a string scanned one by one before its end is searched for with indexOf. */
const SHORT_STRING = 32;
/** closingQuote's answers when the chunk ends inside the string: after an unpaired backslash, or not. */
const ENDS_ESCAPED = -2;
const ENDS_PLAIN = -1;

/**
 * The index of the quote that ends a string in `chunk`, searching from `from` (`escaped`: the byte at
 * `from` follows an unpaired backslash), or ENDS_ESCAPED / ENDS_PLAIN when the chunk ends first. A
 * quote is escaped when an odd run of backslashes precedes it (as stringEnd finds in a whole text,
 * here with the state a chunk boundary leaves); each run is read once, so the search is linear.
 */
function closingQuote(chunk: Buffer, from: number, escaped: boolean): number {
  let start = from;
  let pending = escaped;
  for (;;) {
    const quote = chunk.indexOf(0x22, start);
    const end = quote < 0 ? chunk.length : quote;
    let run = 0;
    while (end - run > start && chunk[end - run - 1] === 0x5c) run++;
    // A run reaching back to `start` continues the pending backslash, if there is one.
    const isEscaped = end - run === start && pending ? run % 2 === 0 : run % 2 === 1;
    if (quote < 0) return isEscaped ? ENDS_ESCAPED : ENDS_PLAIN;
    if (!isEscaped) return quote;
    start = quote + 1;
    pending = false;
  }
}

function tooManyMembers(limit: number, what: string) {
  return gatewayError('JSON_TOO_MANY_MEMBERS', { param: null, args: { param: 'body', limit, what } });
}
