/**
 * Reading the top level of a JSON text without parsing it: the gateway passes service answers and
 * request payloads through as text, and needs only a few top-level facts about them. The scanner
 * skips string contents with indexOf, so a long message costs about as much as a short one.
 * Callers use it on texts that JSON.parse accepted, or fall back to parsing when it says no.
 */

/** Bits of hasAnswerHead: which of the four fields were seen with the right type. */
const HAS_ID = 1;
const HAS_OBJECT = 2;
const HAS_CREATED = 4;
const HAS_MODEL = 8;
const HAS_ALL = 15;

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

function skipSpace(text: string, i: number): number {
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index after the string that starts at `i` (a `"`): the next quote not escaped, found with indexOf. */
function skipString(text: string, i: number): number {
  for (;;) {
    const quote = text.indexOf('"', i + 1);
    if (quote < 0) return text.length;
    let backslash = quote - 1;
    while (text.charCodeAt(backslash) === 92 /* \ */) backslash--;
    if ((quote - 1 - backslash) % 2 === 0) return quote + 1;
    i = quote;
  }
}

/** The index after the value that starts at `i`: a string, an object or array (strings inside skipped), or a literal. */
export function skipValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === 34) return skipString(text, i);
  if (first === 123 || first === 91) {
    let depth = 0;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i = skipString(text, i);
        continue;
      }
      if (c === 123 || c === 91) depth++;
      else if ((c === 125 || c === 93) && --depth === 0) return i + 1;
      i++;
    }
    return i;
  }
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 44 || c === 125 || c === 93 || isSpace(c)) return i;
    i++;
  }
  return i;
}

/**
 * Whether an answer's top level has string `id`, `object` and `model` and a number `created`, read
 * from the text without parsing it: services put these first, so the scan usually stops within the
 * first hundred characters, where JSON.parse would build the whole answer only to look at them.
 * False (and the caller parses) whenever the text is not plainly such an object, so only an answer
 * that repeats one of these keys with another type later could pass unchanged where parsing would
 * have replaced the key's last value.
 */
export function hasAnswerHead(text: string): boolean {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 123) return false;
  let found = 0;
  i = skipSpace(text, i + 1);
  while (text.charCodeAt(i) === 34) {
    const end = skipString(text, i);
    const key = end - i <= 9 ? text.slice(i + 1, end - 1) : '';
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== 58 /* : */) return false;
    i = skipSpace(text, i + 1);
    const c = text.charCodeAt(i);
    if (c === 34) {
      if (key === 'id') found |= HAS_ID;
      else if (key === 'object') found |= HAS_OBJECT;
      else if (key === 'model') found |= HAS_MODEL;
    } else if (key === 'created' && (c === 45 || (c >= 48 && c <= 57))) {
      found |= HAS_CREATED;
    }
    if (found === HAS_ALL) return true;
    i = skipSpace(text, skipValue(text, i));
    if (text.charCodeAt(i) !== 44 /* , */) return false;
    i = skipSpace(text, i + 1);
  }
  return false;
}

/**
 * The raw text of each top-level member of a JSON object text, by key (the last one wins, as in
 * JSON.parse; escaped keys are decoded). Undefined when the text is not a well-formed object.
 */
export function topLevelValues(text: string): Map<string, string> | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 123) return undefined;
  const values = new Map<string, string>();
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === 125) return values;
  while (text.charCodeAt(i) === 34) {
    const end = skipString(text, i);
    const raw = text.slice(i + 1, end - 1);
    const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== 58) return undefined;
    const start = skipSpace(text, i + 1);
    const stop = skipValue(text, start);
    if (stop === start) return undefined;
    values.set(key, text.slice(start, stop));
    i = skipSpace(text, stop);
    if (text.charCodeAt(i) === 125) return values;
    if (text.charCodeAt(i) !== 44) return undefined;
    i = skipSpace(text, i + 1);
  }
  return undefined;
}
