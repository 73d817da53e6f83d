import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { gatewayError } from '../errors.js';
import { ajvFor, formatAjvErrors } from '../validation/ajv.js';

/** Validates `data` against one published type; throws 400 DATA_TYPE_MISMATCH naming the problem. */
export type DataCheck = (data: unknown) => void;

interface Published {
  /** File name → its text as served. */
  readonly files: ReadonlyMap<string, string>;
  /** `/<file>#/<Type>` and `/<file>#<Type>` → the compiled type. */
  readonly types: ReadonlyMap<string, { label: string; validate: ValidateFunction }>;
}

const SPECS_DIR = fileURLToPath(new URL('../../schemas/specs/', import.meta.url));
/** Keys of a spec file that are not types. */
const NOT_TYPES = new Set(['$schema', '$id', '$comment', 'title', 'description', 'definitions']);

let published: Published | undefined;

/** Reads and compiles schemas/specs/*.json once per process: every top-level key is a type. */
function loadPublished(): Published {
  if (published) return published;
  const ajv = ajvFor('callerData');
  const files = new Map<string, string>();
  const types = new Map<string, { label: string; validate: ValidateFunction }>();
  for (const file of readdirSync(SPECS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const text = readFileSync(`${SPECS_DIR}${file}`, 'utf8');
    const doc = JSON.parse(text) as Record<string, unknown>;
    ajv.addSchema(doc, file);
    files.set(file, text);
    for (const type of Object.keys(doc).filter((k) => !NOT_TYPES.has(k))) {
      const entry = { label: `${file}#/${type}`, validate: ajv.getSchema(`${file}#/${type}`)! };
      types.set(`/${file}#/${type}`, entry);
      types.set(`/${file}#${type}`, entry);
    }
  }
  return (published = { files, types });
}

/**
 * The data-type schemas the gateway publishes under `{specs_url}` (schemas/specs/), compiled at boot.
 * A request's `dataType` that points into them, as `{specs_url}/<file>#/<Type>`, makes the gateway
 * validate the request's data before dispatch; any other dataType is the service's business.
 */
export class DataTypes {
  readonly #specsUrl: () => string;
  readonly #published = loadPublished();

  /** `specsUrl` is read on each use: the port is known only once the gateway listens. */
  constructor(specsUrl: () => string) {
    this.#specsUrl = specsUrl;
  }

  get specsUrl(): string {
    return this.#specsUrl();
  }

  fileNames(): string[] {
    return [...this.#published.files.keys()];
  }

  /** A published file's text, or undefined. */
  file(name: string): string | undefined {
    return this.#published.files.get(name);
  }

  /**
   * The check for `dataType` when it names a published type: by `{specs_url}`, or by
   * `<origin>/specs` where origin is the address the caller reached the gateway at. Undefined for
   * a dataType that points elsewhere (a media type, another server's schema); 400 UNKNOWN_DATA_TYPE
   * for a reference into the gateway's specs that names no published type.
   */
  checkFor(dataType: string | undefined, origin?: string): DataCheck | undefined {
    if (!dataType) return undefined;
    const rest = after(dataType, this.#specsUrl()) ?? (origin ? after(dataType, `${origin}/specs`) : undefined);
    if (rest === undefined) return undefined;
    const type = this.#published.types.get(rest);
    if (!type) throw gatewayError('UNKNOWN_DATA_TYPE', { param: 'dataType', args: { dataType, specsUrl: this.#specsUrl() } });
    return (data) => {
      if (type.validate(data)) return;
      // With anyOf or if/then several errors may come back; the deepest is the most specific.
      const errors = type.validate.errors ?? [];
      const deepest = errors.reduce((a, b) => (b.instancePath.length > a.instancePath.length ? b : a), errors[0]!);
      throw gatewayError('DATA_TYPE_MISMATCH', {
        param: 'data',
        args: { param: 'data', dataType: type.label, reason: formatAjvErrors([deepest])[0] },
      });
    };
  }
}

function after(value: string, prefix: string): string | undefined {
  return value.length > prefix.length && value.startsWith(prefix) && value[prefix.length] === '/' ? value.slice(prefix.length) : undefined;
}
