/**
 * A service definition sent to the user-space API, checked exactly as a `services[]` item of the
 * config file is (the same schema item and the same normalisation: core/config/service-config.ts),
 * with what only an operator's file may say refused, and how it is shown back without its secrets.
 */
import { SERVICE_DEFINITION_SCHEMA } from '../config/service-config.js';
import { gatewayError } from '../errors.js';
import { compileRequestSchema } from '../validation/request.js';

/** The config-file fields of a service, as stored (`id`, `account` and `connectionTokens` excepted). */
export type ServiceDefinition = Record<string, unknown> & { name: string };

/**
 * Fields the API refuses, and why. `waker` starts a command or calls a URL from the gateway host,
 * and `upstream.apiKeyEnv` would send any of the gateway's environment variables to an engine URL
 * the caller chooses: both belong to the operator's config file.
 */
const REFUSED: Readonly<Record<string, string>> = {
  id: 'the gateway assigns the ID',
  account: 'the account is the one in the path',
  connectionTokens: 'tokens are made by the gateway: send newConnectionToken: true (the token is shown once)',
  waker: 'a waker runs a command or calls a URL from the gateway host: it is set in the config file only',
};

/** What a caller may change beside the definition itself. */
export interface TokenChanges {
  readonly newConnectionToken: boolean;
  readonly revokeConnectionTokens: readonly string[];
}

const checkDefinition = compileRequestSchema<Record<string, unknown>>({
  ...SERVICE_DEFINITION_SCHEMA,
  $id: 'urn:gateway:user-space:service',
});

/**
 * Splits an API body into its definition fields (merged over `current` for a PATCH: a field set to
 * null is removed) and its token changes, and checks the merged definition against the config's
 * schema item (defaults filled in). Throws 400 VALIDATION_FAILED naming the field.
 */
export function readServiceBody(body: unknown, current?: ServiceDefinition): { definition: ServiceDefinition; tokens: TokenChanges } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw gatewayError('VALIDATION_FAILED', { param: 'body', args: { reason: 'the body must be a JSON object' } });
  }
  const { newConnectionToken = current === undefined, revokeConnectionTokens = [], ...fields } = body as Record<string, unknown>;
  if (typeof newConnectionToken !== 'boolean') refuse('newConnectionToken', 'must be true or false');
  if (
    !Array.isArray(revokeConnectionTokens) ||
    revokeConnectionTokens.some((t) => typeof t !== 'string') ||
    revokeConnectionTokens.length > 64
  ) {
    refuse('revokeConnectionTokens', 'must be a list of connection token IDs');
  }
  for (const [field, reason] of Object.entries(REFUSED)) if (field in fields) refuse(field, reason);
  const upstream = fields.upstream as Record<string, unknown> | null | undefined;
  if (upstream && typeof upstream === 'object' && 'apiKeyEnv' in upstream) {
    refuse(
      'upstream.apiKeyEnv',
      "apiKeyEnv reads the gateway's environment, which is the operator's: send the engine's key in upstream.apiKey (kept, never shown again)",
    );
  }
  const merged: Record<string, unknown> = { ...(current ?? {}) };
  for (const [field, value] of Object.entries(fields)) {
    if (value === null) delete merged[field];
    else merged[field] = value;
  }
  keepEngineKey(merged, current, fields);
  // The engine key is the API's own field (the config file names a variable instead): checked here,
  // kept out of the schema check, and put back.
  const engine = merged.upstream as Record<string, unknown> | undefined;
  const apiKey = engine?.apiKey;
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey.length === 0 || apiKey.length > 4096 || /[\r\n\0]/.test(apiKey))) {
    refuse('upstream.apiKey', 'apiKey must be a non-empty string of at most 4096 characters without line breaks');
  }
  const candidate = structuredClone({
    ...merged,
    ...(engine ? { upstream: withoutApiKey(engine) } : {}),
    id: 1,
    account: 0,
    connectionTokens: [],
  });
  const checked = checkDefinition(candidate);
  const { id: _id, account: _account, connectionTokens: _tokens, ...definition } = checked;
  if (engine && typeof apiKey === 'string') (definition.upstream as Record<string, unknown>).apiKey = apiKey;
  return {
    definition: definition as ServiceDefinition,
    tokens: { newConnectionToken: newConnectionToken as boolean, revokeConnectionTokens: revokeConnectionTokens as string[] },
  };
}

/**
 * An `upstream` block is replaced as a whole; the engine key it had stays when the new block sends
 * none and still calls the same origin (the key never goes to an engine it was not given for).
 */
function keepEngineKey(merged: Record<string, unknown>, current: ServiceDefinition | undefined, fields: Record<string, unknown>): void {
  const before = current?.upstream as Record<string, unknown> | undefined;
  const after = fields.upstream as Record<string, unknown> | undefined;
  if (!before?.apiKey || !after || typeof after !== 'object' || 'apiKey' in after) return;
  if (originOf(before.baseUrl) !== undefined && originOf(before.baseUrl) === originOf(after.baseUrl)) {
    merged.upstream = { ...after, apiKey: before.apiKey };
  }
}

function originOf(url: unknown): string | undefined {
  try {
    return typeof url === 'string' ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}

function refuse(param: string, reason: string): never {
  throw gatewayError('VALIDATION_FAILED', { param, args: { reason: `${param}: ${reason}` } });
}

function withoutApiKey(upstream: Record<string, unknown>): Record<string, unknown> {
  const { apiKey: _apiKey, ...rest } = upstream;
  return rest;
}

/** Header names whose values are credentials however the operator meant them: masked when shown. */
const SECRET_HEADER = /auth|key|token|secret|cookie|session|password/i;

/**
 * The definition as the API shows it: the engine's key never (only whether one is set), user and
 * password in the engine URL masked, credential-looking header values masked.
 */
export function publicDefinition(definition: ServiceDefinition): Record<string, unknown> {
  const upstream = definition.upstream as Record<string, unknown> | undefined;
  if (!upstream) return { ...definition };
  const { apiKey, ...rest } = upstream;
  const headers = Object.fromEntries(
    Object.entries((rest.headers as Record<string, string> | undefined) ?? {}).map(([name, value]) => [
      name,
      SECRET_HEADER.test(name) ? '***' : value,
    ]),
  );
  return { ...definition, upstream: { ...rest, baseUrl: maskedUrl(String(rest.baseUrl)), headers, apiKeySet: typeof apiKey === 'string' } };
}

/** A URL with its user and password, if any, replaced by `***`. */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = '***';
    parsed.password = parsed.password ? '***' : '';
    return parsed.toString();
  } catch {
    return '***';
  }
}
