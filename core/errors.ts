/**
 * The one catalog of coded errors. Handlers and core throw `GatewayError`s built here; the HTTP error
 * middleware, the gRPC mapper and the chat adapters only render them. Nothing else writes error bodies.
 */

/** Error categories; the values are OpenAI's `type` strings so official SDKs pick the right class. */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'api_error';

type Args = Record<string, string | number | boolean | null | undefined>;

interface CatalogEntry {
  status: number;
  type: ErrorType;
  message: (args: Args) => string;
  /** The code sent in gRPC `ApiErrorProto.code` when it differs (codes SDK clients react to). */
  grpcCode?: string;
  /** Whether the message may reach the caller; internal errors show a generic text. */
  expose?: boolean;
  /** A retry cannot help: sent as `x-should-retry: false`. */
  permanent?: boolean;
  /** Seconds a client should wait before retrying, sent as `Retry-After` (every 429 and 503 gets one). */
  retryAfterSec?: number;
}

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

/** `at most 2 (max of model 'm')` for the registry bounds min, max, minLength and maxLength. */
function boundText(a: Args): string {
  const of = `(${str(a.bound)} of model '${str(a.model)}')`;
  switch (a.bound) {
    case 'min':
      return `at least ${str(a.limit)} ${of}`;
    case 'max':
      return `at most ${str(a.limit)} ${of}`;
    case 'minLength':
      return `at least ${str(a.limit)} characters long ${of}`;
    case 'maxLength':
      return `at most ${str(a.limit)} characters long ${of}`;
    default:
      return `within ${str(a.bound)} ${str(a.limit)} ${of}`;
  }
}

export const ERROR_CATALOG = {
  // 400
  MALFORMED_JSON: { status: 400, type: 'invalid_request_error', message: (a) => `Request body is not valid JSON: ${str(a.reason)}` },
  JSON_TOO_DEEP: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `${str(a.param) || 'body'} nests JSON deeper than ${str(a.limit)} levels`,
    permanent: true,
  },
  JSON_KEY_FORBIDDEN: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Field '${str(a.field)}': the key '${str(a.key)}' is not accepted (__proto__, constructor and prototype are refused)`,
    permanent: true,
  },
  JSON_NUMBER_INEXACT: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) =>
      `Field '${str(a.field)}': the number ${str(a.value)} cannot be represented exactly as a double; send fewer digits, or the number as a string`,
    permanent: true,
  },
  VALIDATION_FAILED: { status: 400, type: 'invalid_request_error', message: (a) => `Invalid request: ${str(a.reason)}` },
  PARAMETER_OUT_OF_RANGE: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) =>
      a.reason !== undefined
        ? `Parameter '${str(a.param)}' ${str(a.reason)}`
        : `Parameter '${str(a.param)}' must be ${boundText(a)}, got ${str(a.value)}`,
  },
  PARAMETER_REQUIRED: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Parameter '${str(a.param)}' is required by model '${str(a.model)}'`,
  },
  PARAMETER_TYPE_INVALID: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Parameter '${str(a.param)}' must be ${str(a.expected)} (model '${str(a.model)}'), got ${str(a.value)}`,
  },
  PARAMETER_VALUE_NOT_ALLOWED: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Parameter '${str(a.param)}' must be one of ${str(a.allowed)} (model '${str(a.model)}'), got ${str(a.value)}`,
  },
  UNKNOWN_DATA_TYPE: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Data type '${str(a.dataType)}' is not published under ${str(a.specsUrl)}`,
  },
  DATA_TYPE_MISMATCH: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `${str(a.param) || 'data'} does not match data type ${str(a.dataType)}: ${str(a.reason)}`,
  },
  UPSTREAM_FORMAT_MISMATCH: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) =>
      `Service '${str(a.service)}' calls an Anthropic Messages engine, which takes Messages requests only: send this one to ${str(a.use)}`,
    permanent: true,
  },
  CONTEXT_LENGTH_EXCEEDED: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) =>
      `prompt is too long: ${str(a.tokens)} tokens, and the maximum context length of service '${str(a.service)}' is ${str(a.limit)} tokens: shorten the conversation`,
    permanent: true,
  },
  HEADER_VALUE_INVALID: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Header '${str(a.header)}' carries a control character (CR, LF or NUL): its value cannot be passed on`,
    permanent: true,
  },
  RESPONSE_CHAIN_TOO_LONG: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) =>
      `The conversation continued from response '${str(a.id)}' is ${str(a.bytes)} bytes with this turn, past the limit of ${str(a.limit)} (plugins.options.chatapi.responses.maxConversationBytes): start a new conversation with the input you need`,
    permanent: true,
  },
  UNKNOWN_CONFIG_ID: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Service has no predict configuration with id ${str(a.configId)}`,
  },
  ACCOUNT_NOT_FOUND: { status: 400, type: 'invalid_request_error', message: (a) => `Account '${str(a.account)}' does not exist` },
  SERVICE_NOT_FOUND: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Service '${str(a.model)}' does not exist in account '${str(a.account)}'`,
  },
  START_SERVING_REQUIRED: {
    status: 400,
    type: 'invalid_request_error',
    grpcCode: 'platform.gate.start_serving_required',
    message: (a) => `The first message of processAsync must be startServing, got ${str(a.got) || 'nothing'}`,
    permanent: true,
  },
  BULK_LANE_REFUSED: {
    status: 409,
    type: 'invalid_request_error',
    grpcCode: 'platform.gate.bulk_lane_refused',
    message: (a) =>
      `A bulk lane needs a serving instance of this service with boot UUID '${str(a.bootUuid)}' and no lane yet, on a gateway that offers lanes`,
  },
  NOT_IMPLEMENTED: { status: 501, type: 'api_error', message: (a) => `${str(a.what)} is not implemented by this gateway`, permanent: true },
  SPEECH_CONFIG_REQUIRED: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `The first processRecognition message must carry config (RecognitionConfig), got ${str(a.got)}`,
  },
  SPEECH_CONFIG_REPEATED: {
    status: 400,
    type: 'invalid_request_error',
    message: () => 'config may be sent only once, in the first processRecognition message',
  },
  AUDIO_FORMAT_UNSUPPORTED: { status: 400, type: 'invalid_request_error', message: (a) => `Audio format not supported: ${str(a.reason)}` },
  TOKEN_COUNT_UNSUPPORTED: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Service '${str(a.service)}' cannot count tokens (it answers no ext call count_tokens): ${str(a.reason)}`,
    permanent: true,
  },
  NO_ACTIVE_INSTANCES: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Service '${str(a.service)}' has no active instances`,
  },
  SERVICE_NOT_FITTED: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Service '${str(a.service)}' is not fitted yet: it answers once a fitting job of it reaches SUCCESS`,
  },
  SERVICE_NOT_FITTABLE: {
    status: 400,
    type: 'invalid_request_error',
    message: (a) => `Service '${str(a.service)}' ${str(a.reason) || 'is not fittable'}`,
    permanent: true,
  },
  // 401
  API_KEY_MISSING: {
    status: 401,
    type: 'authentication_error',
    message: (a) => `API key missing: send it in the ${str(a.header) || 'PLATFORM-API-KEY'} header`,
    permanent: true,
  },
  API_KEY_INVALID: { status: 401, type: 'authentication_error', message: () => 'API key is not valid', permanent: true },
  INSTANCE_BY_TOKEN_NOT_FOUND: {
    status: 401,
    type: 'authentication_error',
    grpcCode: 'platform.gate.instance_by_token_not_found',
    message: () => 'No service accepts this connection token',
    permanent: true,
  },
  SIGN_IN_REQUIRED: {
    status: 401,
    type: 'authentication_error',
    message: () => 'Sign in (the gw_session cookie) or send Authorization: Bearer <API key with the MANAGE permission>',
    permanent: true,
  },
  SIGN_IN_FAILED: { status: 401, type: 'authentication_error', message: () => 'Email or password is not valid', permanent: true },
  SETUP_TOKEN_INVALID: {
    status: 401,
    type: 'authentication_error',
    message: () => 'The setup token is not valid (it is printed once in the gateway log, and only while no operator exists)',
    permanent: true,
  },
  // 402
  ACCOUNT_BLOCKED: {
    status: 402,
    type: 'permission_error',
    message: (a) => `Account '${str(a.account)}' is blocked by billing`,
    permanent: true,
  },
  BUDGET_EXCEEDED: {
    status: 402,
    type: 'permission_error',
    message: (a) =>
      `The budget of ${str(a.budget)} is spent: ${str(a.limit)} ${a.unit === 'money' ? 'in money' : 'tokens'} ${a.period === 'total' ? 'in total' : `per ${str(a.period)}`}`,
    permanent: true,
  },
  // 403
  TOKEN_PERMISSION_REQUIRED: {
    status: 403,
    type: 'permission_error',
    message: (a) => `The API key lacks the ${str(a.permission)} permission`,
    permanent: true,
  },
  ACCESS_TO_ANOTHER_ACCOUNT_DENIED: {
    status: 403,
    type: 'permission_error',
    message: (a) => `Access to account '${str(a.account)}' is denied`,
    permanent: true,
  },
  API_KEY_SERVICE_NOT_ALLOWED: {
    status: 403,
    type: 'permission_error',
    message: (a) => `API key '${str(a.key)}' may not call service '${str(a.service)}' (its services list)`,
    permanent: true,
  },
  ACCESS_TO_ANOTHER_ACCOUNT_NOT_PUBLIC_DENIED: {
    status: 403,
    type: 'permission_error',
    message: (a) => `Service '${str(a.service)}' is not public`,
    permanent: true,
  },
  CSRF_TOKEN_INVALID: {
    status: 403,
    type: 'permission_error',
    message: () => 'A change made with a session needs its CSRF token in the x-csrf-token header (login and auth/me return it)',
    permanent: true,
  },
  SESSION_ACCOUNT_REQUIRED: {
    status: 403,
    type: 'permission_error',
    message: () =>
      'The session acts for no account it may call for: choose one with PUT /api/platformcore/auth/session {"account": "<id or name>"}',
    permanent: true,
  },
  ROLE_REQUIRED: {
    status: 403,
    type: 'permission_error',
    message: (a) => `This needs the ${str(a.role)} role${a.account !== undefined ? ` on account '${str(a.account)}'` : ''}`,
    permanent: true,
  },
  // 404
  NOT_FOUND: {
    status: 404,
    type: 'not_found_error',
    message: (a) => `No route for ${str(a.method)} ${str(a.path)}${a.hint ? `: ${str(a.hint)}` : ''}`,
    permanent: true,
  },
  ENTITY_NOT_FOUND_BY_ID: {
    status: 404,
    type: 'not_found_error',
    message: (a) => `No ${str(a.entity) || 'entity'} with id '${str(a.id)}'`,
    permanent: true,
  },
  PROVIDER_NOT_FOUND: {
    status: 404,
    type: 'not_found_error',
    message: (a) => `Provider '${str(a.provider)}' is not in the registry`,
    permanent: true,
  },
  REGISTRY_MODEL_NOT_FOUND: {
    status: 404,
    type: 'not_found_error',
    message: (a) => `Provider '${str(a.provider)}' has no model '${str(a.model)}' in the registry`,
    permanent: true,
  },
  MODEL_NOT_FOUND: {
    status: 404,
    type: 'not_found_error',
    message: (a) => `Model '${str(a.model)}' does not exist or is not available to this key${a.hint ? `; ${str(a.hint)}` : ''}`,
    permanent: true,
  },
  ASYNC_REQUEST_BODY_WAS_LOST: {
    status: 404,
    type: 'not_found_error',
    message: (a) => `The request body of task '${str(a.taskId)}' could not be restored`,
    permanent: true,
  },
  ASYNC_RESPONSE_IS_CORRUPTED: {
    status: 404,
    type: 'not_found_error',
    message: (a) => `The stored result of task '${str(a.taskId)}' could not be read`,
    permanent: true,
  },
  // 405, 408, 409, 413, 415, 431
  METHOD_NOT_ALLOWED: {
    status: 405,
    type: 'invalid_request_error',
    message: (a) => `Method ${str(a.method)} is not allowed on ${str(a.path)}`,
    permanent: true,
  },
  SPEECH_CALLER_TOO_SLOW: {
    status: 408,
    type: 'invalid_request_error',
    message: (a) => `The caller did not read the audio it asked for: more than ${str(a.limit)} bytes were waiting for it`,
  },
  CALLER_TOO_SLOW: {
    status: 408,
    type: 'invalid_request_error',
    message: (a) => `The caller did not read the answer it asked for: more than ${str(a.limit)} bytes were waiting for it`,
  },
  FIRST_MESSAGE_TIMEOUT: {
    status: 408,
    type: 'invalid_request_error',
    message: (a) => `The call did not send its first message within ${str(a.timeoutMs)} ms of opening`,
  },
  IDLE_CALL_TIMEOUT: {
    status: 408,
    type: 'invalid_request_error',
    message: (a) => `The call sent no message for ${str(a.timeoutMs)} ms; a call no key admits is closed when idle`,
  },
  START_SERVING_TIMEOUT: {
    status: 408,
    type: 'invalid_request_error',
    grpcCode: 'platform.gate.start_serving_timeout',
    message: (a) => `No startServing within ${str(a.timeoutMs)} ms of opening processAsync`,
    permanent: true,
  },
  CONFLICT: { status: 409, type: 'invalid_request_error', message: (a) => str(a.reason) || 'Conflict', permanent: true },
  CONFIG_ENTRY_READ_ONLY: {
    status: 409,
    type: 'invalid_request_error',
    message: (a) => `${str(a.entity)} '${str(a.name)}' is declared in the config file and is read-only here: change the file`,
    permanent: true,
  },
  SERVICE_NAME_TAKEN: {
    status: 409,
    type: 'invalid_request_error',
    message: (a) => `The account already has a service named '${str(a.name)}'`,
    permanent: true,
  },
  SERVICE_ALIAS_TAKEN: {
    status: 409,
    type: 'invalid_request_error',
    message: (a) => `The alias '${str(a.alias)}' already calls another service`,
    permanent: true,
  },
  SERVICE_READ_ONLY: {
    status: 409,
    type: 'invalid_request_error',
    message: (a) => `Service '${str(a.service)}' ${str(a.reason)}: it cannot be changed through the API`,
    permanent: true,
  },
  REQUEST_TOO_LARGE: {
    status: 413,
    type: 'invalid_request_error',
    message: (a) => `Request body exceeds the limit of ${str(a.limit)} bytes`,
    permanent: true,
  },
  MESSAGE_TOO_LARGE: {
    status: 413,
    type: 'invalid_request_error',
    message: (a) => `gRPC message of ${str(a.size)} bytes exceeds the limit of ${str(a.limit)} bytes for this call`,
    permanent: true,
  },
  EXT_PARAMS_TOO_LARGE: {
    status: 413,
    type: 'invalid_request_error',
    message: (a) => `ext params exceed the limit of ${str(a.maxParams)} entries and ${str(a.maxParamBytes)} bytes: ${str(a.reason)}`,
    permanent: true,
  },
  JSON_TOO_MANY_MEMBERS: {
    status: 413,
    type: 'invalid_request_error',
    message: (a) => `${str(a.param) || 'body'} holds more than ${str(a.limit)} ${str(a.what)}`,
    permanent: true,
  },
  STORAGE_QUOTA_EXCEEDED: {
    status: 413,
    type: 'invalid_request_error',
    message: (a) =>
      `Account '${str(a.account)}' would store more than its quota of ${str(a.limit)} bytes (${str(a.used)} stored); delete datasets or wait for stored results to expire`,
    permanent: true,
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    type: 'invalid_request_error',
    message: (a) => `Content-Type '${str(a.contentType)}' is not supported here; send ${str(a.expected)}`,
    permanent: true,
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    type: 'invalid_request_error',
    message: (a) => `headers exceed the limit of ${str(a.maxHeaders)} entries and ${str(a.maxHeaderBytes)} bytes`,
    permanent: true,
  },
  // 429
  RATE_LIMIT_EXCEEDED: {
    status: 429,
    type: 'rate_limit_error',
    grpcCode: 'platform.gate.pps_limit_exceeded',
    message: (a) => `Account '${str(a.account)}' exceeded its limit of ${str(a.limit)} requests per second`,
    retryAfterSec: 1,
  },
  KEY_RATE_LIMIT_EXCEEDED: {
    status: 429,
    type: 'rate_limit_error',
    grpcCode: 'platform.gate.pps_limit_exceeded',
    message: (a) => `API key '${str(a.key)}' exceeded its limit of ${str(a.limit)} requests per second`,
    retryAfterSec: 1,
  },
  TOO_MANY_IDLE_ASYNC_TASKS: {
    status: 429,
    type: 'rate_limit_error',
    message: (a) => `Account '${str(a.account)}' already has ${str(a.limit)} tasks waiting for processing`,
    retryAfterSec: 1,
  },
  TOO_MANY_WAITING_REQUESTS: {
    status: 429,
    type: 'rate_limit_error',
    message: (a) =>
      `Account '${str(a.account)}' already has ${str(a.limit)} requests waiting for a service instance to connect; retry shortly`,
    retryAfterSec: 1,
  },
  TOO_MANY_CONCURRENT_STREAMS: {
    status: 429,
    type: 'rate_limit_error',
    message: (a) => `Account '${str(a.account)}' already holds ${str(a.limit)} streams open on this gateway; close one first`,
  },
  SIGN_IN_RATE_LIMITED: {
    status: 429,
    type: 'rate_limit_error',
    message: () => 'Too many failed sign-ins from this address or for this email; wait a minute',
    retryAfterSec: 60,
  },
  // 499, 5xx
  REQUEST_CANCELED: { status: 499, type: 'api_error', message: () => 'The request was canceled by the caller' },
  INTERNAL_ERROR: { status: 500, type: 'api_error', message: () => 'Internal gateway error', expose: false },
  ASYNC_TASK_ABANDONED: {
    status: 500,
    type: 'api_error',
    message: (a) =>
      `Task '${str(a.taskId)}' was started ${str(a.attempts)} times without finishing (its gateway stopped each time); it is not started again`,
    permanent: true,
  },
  SERVICE_BAD_RESPONSE: {
    status: 502,
    type: 'api_error',
    message: (a) => `Service '${str(a.service)}' answered with an invalid message: ${str(a.reason)}`,
  },
  SERVICE_ANSWER_TOO_LARGE: {
    status: 502,
    type: 'api_error',
    message: (a) => `Service '${str(a.service)}' answered more than ${str(a.limit)} bytes, the limit of an answer the gateway collects`,
  },
  SERVICE_DISCONNECTED: { status: 502, type: 'api_error', message: (a) => `Service '${str(a.service)}' disconnected before answering` },
  STREAM_CUT_OFF: {
    status: 502,
    type: 'api_error',
    message: (a) => `Service '${str(a.service)}' ended its stream before its terminal event (${str(a.expected)}): the answer is incomplete`,
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    type: 'api_error',
    message: (a) =>
      a.reason
        ? `Service '${str(a.service)}' is unavailable right now: ${str(a.reason)}; retry shortly`
        : `Service '${str(a.service)}' has no connected instance right now; retry shortly`,
    retryAfterSec: 1,
  },
  NO_INSTANCE_IN_TIME: {
    status: 503,
    type: 'api_error',
    message: (a) =>
      `Service '${str(a.service)}' had no connected instance within ${str(a.waitMs)} ms${a.woken ? ' (its waker was called: it may still be starting)' : ''}; retry shortly`,
    retryAfterSec: 2,
  },
  UPSTREAM_UNREACHABLE: {
    status: 502,
    type: 'api_error',
    message: (a) => `Service '${str(a.service)}': its engine cannot be reached (${str(a.reason)})`,
  },
  FITTING_INTERRUPTED: {
    status: 503,
    type: 'api_error',
    message: () => 'The gateway running this fitting job stopped before the fit finished; start the fit again',
  },
  UNAUTHENTICATED_BYTES_EXHAUSTED: {
    status: 503,
    type: 'api_error',
    message: (a) => `The gateway holds ${str(a.limit)} bytes of messages from callers not yet authenticated; retry shortly`,
    retryAfterSec: 1,
  },
  GATE_IS_SHUT_DOWN: {
    status: 503,
    type: 'api_error',
    grpcCode: 'platform.gate.gate_is_shut_down',
    message: () => 'The gateway is shutting down',
  },
  PREDICT_TIMEOUT: {
    status: 504,
    type: 'api_error',
    message: (a) => `Service '${str(a.service)}' did not answer within ${str(a.timeoutSec)} s`,
  },
  STREAM_FIRST_CHUNK_TIMEOUT: {
    status: 504,
    type: 'api_error',
    message: (a) => `Service '${str(a.service)}' sent no first chunk within ${str(a.timeoutSec)} s`,
  },
  UPSTREAM_TIMEOUT: { status: 504, type: 'api_error', message: (a) => `Service '${str(a.service)}': its engine ${str(a.reason)}` },
  STREAM_IDLE_TIMEOUT: {
    status: 504,
    type: 'api_error',
    message: (a) => `Service '${str(a.service)}' sent nothing for ${str(a.timeoutSec)} s in the middle of a stream`,
  },
} satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface GatewayErrorOptions {
  args?: Args;
  /** The request field the error is about (rendered as `param`). */
  param?: string | null;
  message?: string;
  cause?: unknown;
}

/**
 * An error an HTTP upstream answered, relayed by a proxying service (the `upstream.*` args of its
 * service error, see core/grpc/api-error.ts): the adapters render its `type`, `code` and `param`
 * exactly as the upstream sent them.
 */
export interface UpstreamErrorFields {
  readonly type: string | null;
  readonly code: string | null;
  readonly param: string | null;
}

export class GatewayError extends Error {
  readonly code: string;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly args: Record<string, string>;
  readonly expose: boolean;
  readonly permanent: boolean;
  readonly grpcCode: string;
  /** `Retry-After` seconds for HTTP callers; undefined: none (429 and 503 still get a default). */
  readonly retryAfterSec: number | undefined;
  /** Response headers relayed from an upstream (`retry-after-ms`, `x-ratelimit-*`, `x-upstream-request-id`). */
  readonly headers: Readonly<Record<string, string>>;
  readonly upstream: UpstreamErrorFields | undefined;

  constructor(fields: {
    code: string;
    status: number;
    type: ErrorType;
    message: string;
    param?: string | null;
    args?: Args;
    expose?: boolean;
    permanent?: boolean;
    grpcCode?: string;
    cause?: unknown;
    retryAfterSec?: number;
    headers?: Record<string, string>;
    upstream?: UpstreamErrorFields;
  }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'GatewayError';
    this.code = fields.code;
    this.status = fields.status;
    this.type = fields.type;
    this.param = fields.param ?? null;
    this.args = stringArgs(fields.args ?? {});
    this.expose = fields.expose ?? true;
    this.permanent = fields.permanent ?? false;
    this.grpcCode = fields.grpcCode ?? fields.code;
    this.retryAfterSec = fields.retryAfterSec;
    this.headers = fields.headers ?? {};
    this.upstream = fields.upstream;
  }
}

/**
 * Where the field an error is about travels when the error leaves as `{code, message, args}` only
 * (gRPC's ApiErrorProto, a stored task error): in `args.param`, as the SDKs name theirs. `args` with
 * `param` added when it is set and `args` lacks one.
 */
export function argsWithParam(args: Record<string, string>, param: string | null): Record<string, string> {
  return param !== null && args.param === undefined ? { ...args, param } : args;
}

/** The field such an error is about, read back from its `args.param` (undefined when none). */
export function paramOfArgs(args: Record<string, string>): string | undefined {
  return typeof args.param === 'string' ? args.param : undefined;
}

function stringArgs(args: Args): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(args)) if (v !== undefined && v !== null) out[k] = String(v);
  return out;
}

/** Builds the catalog error `code`, its message filled from `args`. */
export function gatewayError(code: ErrorCode, options: GatewayErrorOptions = {}): GatewayError {
  const entry: CatalogEntry = ERROR_CATALOG[code];
  const args = options.args ?? {};
  return new GatewayError({
    code,
    status: entry.status,
    type: entry.type,
    message: options.message ?? entry.message(args),
    param: options.param ?? (typeof args.param === 'string' ? args.param : null),
    args,
    expose: entry.expose,
    permanent: entry.permanent,
    grpcCode: entry.grpcCode,
    cause: options.cause,
    retryAfterSec: entry.retryAfterSec,
  });
}

/**
 * A spent budget as the chat adapters answer it: 429 with OpenAI's `insufficient_quota` type and
 * `x-should-retry: false`, what OpenAI clients expect when quota is gone (the platform API and gRPC
 * keep the catalog's 402). Other errors are returned as they are.
 */
export function asChatAdapterError(err: GatewayError): GatewayError {
  if (err.code !== 'BUDGET_EXCEEDED') return err;
  return new GatewayError({
    code: err.code,
    status: 429,
    type: 'insufficient_quota',
    message: err.message,
    args: err.args,
    permanent: true,
    grpcCode: err.grpcCode,
  });
}

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}

/** Any thrown value as a GatewayError; unknown failures become a non-exposed INTERNAL_ERROR. */
export function toGatewayError(err: unknown): GatewayError {
  if (isGatewayError(err)) return err;
  return gatewayError('INTERNAL_ERROR', { cause: err });
}

export function errorTypeForStatus(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 402 || status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}

/** The envelope of docs/design.md (decisions), used by the platform API and the adapters alike. */
export interface ErrorBody {
  /** `type`, `code` and `param` of a relayed upstream error are the upstream's own (`code` may be null). */
  error: { code: string | null; message: string; type: string; param: string | null; args: Record<string, string> };
}

export function renderErrorBody(err: GatewayError): ErrorBody {
  const upstream = err.upstream;
  return {
    error: {
      code: upstream ? upstream.code : err.code,
      message: err.expose ? err.message : ERROR_CATALOG.INTERNAL_ERROR.message(),
      type: upstream?.type ?? err.type,
      param: upstream ? upstream.param : err.param,
      args: err.expose ? err.args : {},
    },
  };
}

/**
 * The response headers of an error for HTTP callers: `x-should-retry: false` when no retry can help,
 * `Retry-After` on every 429 and 503 (the SDKs honour it; 1 s when the error names no delay), and the
 * headers relayed from an upstream.
 */
export function errorHeaders(err: GatewayError): Record<string, string> {
  const headers: Record<string, string> = { ...err.headers };
  if (err.permanent) headers['x-should-retry'] = 'false';
  const retryAfter = err.retryAfterSec ?? (err.status === 429 || err.status === 503 ? 1 : undefined);
  if (retryAfter !== undefined && headers['retry-after'] === undefined) headers['retry-after'] = String(retryAfter);
  return headers;
}

/** Codes that stop the boot; each names what is wrong (a config path, a plugin, a model). */
export type BootErrorCode =
  | 'CONFIG_INVALID'
  | 'CONFIG_UNREADABLE'
  | 'PORT_IN_USE'
  | 'STORE_UNREACHABLE'
  | 'STORE_SCHEMA_NEWER'
  | 'REGISTRY_INVALID'
  | 'PLUGIN_NOT_FOUND'
  | 'PLUGIN_INVALID'
  | 'PLUGIN_DUPLICATE'
  | 'PLUGIN_OPTIONS_INVALID'
  | 'PLUGIN_START_FAILED';

export class BootError extends Error {
  readonly code: BootErrorCode;
  readonly problems: string[];

  constructor(code: BootErrorCode, summary: string, problems: string[] = [], cause?: unknown) {
    super(
      problems.length ? `${code}: ${summary}\n${problems.map((p) => `  - ${p}`).join('\n')}` : `${code}: ${summary}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = 'BootError';
    this.code = code;
    this.problems = problems;
  }
}
