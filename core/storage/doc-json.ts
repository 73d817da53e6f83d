/**
 * Documents as JSON text, for the embedded home's rows (sqlite-docs.ts) and the store's export lines
 * (transfer.ts): a Buffer as `{ "$b64": <base64> }`, and a caller's object that would read back as a
 * tag as `{ "$lit": <the object> }`, so that every document comes back as it was written.
 */
/** Buffers inside a document, as JSON: `{ "$b64": <base64> }`. */
const BINARY_TAG = '$b64';
/**
 * A caller's object that would read back as a tag (its one key `$b64` with a string, or `$lit` with
 * an object), kept as `{ "$lit": <the object> }`: before, `{"$b64": "AQI="}` in a stored response
 * came back as a Buffer.
 */
const LITERAL_TAG = '$lit';

/** A plain object of one own key: that key. */
function onlyKey(value: object): string | undefined {
  if (Array.isArray(value) || Buffer.isBuffer(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 ? keys[0] : undefined;
}

const isObject = (value: unknown): value is object => value !== null && typeof value === 'object';

/** What decoding reads as a tag: `$b64` with a string, `$lit` with an object. */
function tagOf(value: object): typeof BINARY_TAG | typeof LITERAL_TAG | undefined {
  // `Object.hasOwn` first: most objects have neither key, and it allocates nothing.
  if (!Object.hasOwn(value, BINARY_TAG) && !Object.hasOwn(value, LITERAL_TAG)) return undefined;
  const key = onlyKey(value);
  const inner = (value as Record<string, unknown>)[key ?? ''];
  if (key === BINARY_TAG && typeof inner === 'string') return BINARY_TAG;
  if (key === LITERAL_TAG && isObject(inner)) return LITERAL_TAG;
  return undefined;
}

/** A document as JSON text (undefined fields dropped, as JSON does), Buffers tagged and tag-like objects wrapped. */
export function encodeDoc(doc: unknown): string {
  let wrapped: WeakSet<object> | undefined;
  // The replacer sees each value after its toJSON; `this[key]` is the value itself.
  return JSON.stringify(doc, function (this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    if (Buffer.isBuffer(raw)) return { [BINARY_TAG]: raw.toString('base64') };
    if (!isObject(value) || tagOf(value) === undefined || wrapped?.has(value)) return value;
    (wrapped ??= new WeakSet()).add(value); // the wrapper's own value comes back through here once
    return { [LITERAL_TAG]: value };
  });
}

/**
 * The document back from its text. Parsed plainly and then walked for tags: a JSON.parse reviver,
 * called for every value, made decoding about three times as slow as the parse alone.
 */
export function decodeDoc<T>(text: string): T {
  const doc = JSON.parse(text) as unknown;
  return (text.includes(`"${BINARY_TAG}"`) || text.includes(`"${LITERAL_TAG}"`) ? restoreTags(doc) : doc) as T;
}

/** `value`, parsed from encodeDoc's text, with its tags read back (in place; a new value where `value` itself is a tag). */
export function restoreTags(value: unknown): unknown {
  if (!isObject(value)) return value;
  const tag = tagOf(value);
  if (tag === BINARY_TAG) return Buffer.from((value as Record<string, string>)[BINARY_TAG]!, 'base64');
  const container = (tag === LITERAL_TAG ? (value as Record<string, unknown>)[LITERAL_TAG] : value) as Record<string, unknown>;
  return replaceValues(container, restoreTags);
}

/**
 * `container` (an object or array parsed from JSON) with each of its values replaced by `replace`'s
 * answer, in place: only a changed value is written back, and JSON.parse's own "__proto__" keys are
 * data properties, so writing one back sets the key, not the prototype.
 */
export function replaceValues<C extends Record<string, unknown>>(container: C, replace: (value: unknown) => unknown): C {
  for (const key of Object.keys(container)) {
    const inner = container[key];
    const replaced = replace(inner);
    if (replaced !== inner) (container as Record<string, unknown>)[key] = replaced;
  }
  return container;
}
