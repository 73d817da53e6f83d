/**
 * Every call the console makes, all with the session: its cookie (HttpOnly: this code never sees it)
 * and, on every change, its CSRF token in `x-csrf-token`. The user-space API (`/api/platformcore/...`)
 * authorizes the session per account; the platform API (fitting, datasets, async tasks) and the chat
 * adapters take it as a caller of the session's *current account* (the account switcher changes it
 * with `PUT auth/session`). The console never holds an API key: it sends none.
 */

export const CORE = '/api/platformcore';
export const GATE = '/api/platformgate';
export const GATEWAY = '/api/platformgateway';
export const CHAT = '/api/adapters/chatapi/v1';

/** A coded error of the gateway, as its one renderer writes it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';
let sessionEnded: () => void = () => undefined;
/** Called when a session call answers 401: the session expired or was ended elsewhere. */
export function onSessionEnded(handler: () => void): void {
  sessionEnded = handler;
}
/** Set from login and `auth/me`; sent on every change made with the session. */
export function setCsrf(token: string): void {
  csrfToken = token;
}

interface CallInit {
  method?: string;
  body?: unknown;
  /** Raw body (a dataset file) with its type. */
  raw?: Blob;
  signal?: AbortSignal;
}

/** The coded error of a refused answer. */
export async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error)
      return new ApiError(response.status, body.error.code ?? String(response.status), body.error.message ?? response.statusText);
  } catch {
    // Not JSON: the status line says enough.
  }
  return new ApiError(response.status, String(response.status), text.slice(0, 200) || response.statusText || `HTTP ${response.status}`);
}

/**
 * One request with the session, answered as it comes (a stream, a 204): the cookie same-origin, the
 * CSRF token on a change. A 401 ends the console's session (expired, or ended elsewhere).
 */
export async function request(path: string, init: CallInit = {}): Promise<Response> {
  const method = init.method ?? (init.body === undefined && !init.raw ? 'GET' : 'POST');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.raw) headers['content-type'] = init.raw.type || 'application/octet-stream';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
    credentials: 'same-origin',
    cache: 'no-store',
    signal: init.signal,
  });
  if (response.status === 401 && !path.endsWith('/auth/login') && !path.endsWith('/auth/me')) sessionEnded();
  return response;
}

/** One call; answers the parsed JSON (or undefined for an empty body), throws `ApiError` otherwise. */
export async function call<T = unknown>(path: string, init: CallInit = {}): Promise<T> {
  const response = await request(path, init);
  if (!response.ok) throw await errorOf(response);
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Where list answers keep their items (`{rows}`, `{apiKeys}`, ...); a bare array is taken as it is. */
const LIST_FIELDS = ['rows', 'items', 'apiKeys', 'keys', 'members', 'accounts', 'sessions', 'services', 'data', 'models'];

/** The items of a list answer, whichever of the list fields the endpoint uses. */
export function items<T>(answer: unknown): T[] {
  if (Array.isArray(answer)) return answer as T[];
  if (answer && typeof answer === 'object') {
    for (const field of LIST_FIELDS) {
      const value = (answer as Record<string, unknown>)[field];
      if (Array.isArray(value)) return value as T[];
    }
  }
  return [];
}

export const enc = encodeURIComponent;

/** `/api/platformcore/account/{account}` */
export const accountPath = (account: string) => `${CORE}/account/${enc(account)}`;
