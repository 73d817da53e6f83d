import {
  GatewayError,
  argsWithParam,
  errorTypeForStatus,
  paramOfArgs,
  type GatewayError as GatewayErrorType,
  type UpstreamErrorFields,
} from '../errors.js';
import { CLIENT_ERROR_CODES, UpstreamErrorArgs, simpleStatusOf, statusOfSimpleStatus, type ApiErrorProto } from '../../proto/src/index.js';

/**
 * A catalog error as the `error` member of a gRPC response: its HTTP status in `statusCode`, and in
 * `status` too when `SimpleStatusProto` has a value for it, because the public SDKs' clients read
 * `status` (unset, it reads as OK). ApiErrorProto has no `param`: the field the error is about goes in
 * `args.param`, where the SDKs put theirs (fromServiceError reads it back).
 */
export function toApiErrorProto(err: GatewayErrorType): ApiErrorProto {
  const proto: ApiErrorProto = {
    code: err.grpcCode,
    message: err.expose ? err.message : 'Internal gateway error',
    statusCode: err.status,
    args: err.expose ? argsWithParam(err.args, err.param) : {},
  };
  const name = err.status === 0 ? undefined : simpleStatusOf(err.status);
  if (name) proto.status = name;
  return proto;
}

/**
 * A service's own error, passed on to the caller with its code and message. The HTTP status is
 * `statusCode` when set, else the `status` enum, else 400 for the SDKs' client-error codes and 500.
 * A service marks an error that no retry can fix (an exhausted upstream quota, its own credentials
 * refused) with the arg `retryable: "false"`; HTTP callers then get `x-should-retry: false`. The
 * field it is about, `args.param` (the SDKs' bad-request errors name it so), is the error's `param`,
 * which the HTTP adapters render (it was `null` there before).
 */
export function fromServiceError(proto: ApiErrorProto, serviceName: string): GatewayError {
  const code = proto.code || 'platform-action.common.internal-error';
  const status = validStatus(proto.statusCode) ?? statusFromEnum(proto.status) ?? (CLIENT_ERROR_CODES.has(code) ? 400 : 500);
  const relay = upstreamRelay(proto.args ?? {}, code);
  return new GatewayError({
    code,
    status,
    type: errorTypeForStatus(status),
    message: proto.message || `Service '${serviceName}' failed with ${code}`,
    args: relay.args,
    param: relay.upstream === undefined ? paramOfArgs(relay.args) : undefined,
    grpcCode: code,
    permanent: proto.args?.retryable === 'false',
    headers: relay.headers,
    upstream: relay.upstream,
  });
}

/** The relay convention of proxying services (proto `UpstreamErrorArgs`): see upstreamRelay. */
const UPSTREAM_ARG = UpstreamErrorArgs;

/** Upstream headers passed on to the caller: the ones clients read to pace their retries. */
const RELAYED_HEADER = /^(retry-after|retry-after-ms|x-ratelimit-[a-z0-9-]+|anthropic-ratelimit-[a-z0-9-]+)$/;

/** Whether an upstream response header (name in lower case) is one the caller gets too. */
export const isRelayedUpstreamHeader = (name: string): boolean => RELAYED_HEADER.test(name);

/**
 * A service error that relays an upstream's HTTP error (`upstream.relayed: "true"`) becomes the
 * upstream's exact type/code/param and its retry headers (`retry-after`, `retry-after-ms`,
 * `x-ratelimit-*`) plus `x-upstream-request-id`, instead of ordinary args.
 */
interface Relay {
  args: Record<string, string>;
  headers?: Record<string, string>;
  upstream?: UpstreamErrorFields;
}

function upstreamRelay(args: Record<string, string>, code: string): Relay {
  if (args[UPSTREAM_ARG.relayed] !== 'true') return { args };
  const rest: Record<string, string> = {};
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (key.startsWith(UPSTREAM_ARG.headerPrefix)) {
      const name = key.slice(UPSTREAM_ARG.headerPrefix.length).toLowerCase();
      if (isRelayedUpstreamHeader(name) && /^[\x20-\x7e]{1,200}$/.test(value)) headers[name] = value;
    } else if (key === UPSTREAM_ARG.requestId) {
      if (/^[\x21-\x7e]{1,200}$/.test(value)) headers['x-upstream-request-id'] = value;
    } else if (!key.startsWith('upstream.')) {
      rest[key] = value;
    }
  }
  return {
    args: rest,
    headers,
    // An Anthropic error has no code: the service's own error code stands in for it.
    upstream: {
      type: args[UPSTREAM_ARG.type] ?? null,
      code: args[UPSTREAM_ARG.code] ?? (args[UPSTREAM_ARG.dialect] === 'anthropic' ? code : null),
      param: args[UPSTREAM_ARG.param] ?? null,
    },
  };
}

function validStatus(status: number | undefined): number | undefined {
  return status !== undefined && status >= 400 && status <= 599 ? status : undefined;
}

/** `SimpleStatusProto` arrives as its name (enums: String); its number is the HTTP status. */
function statusFromEnum(name: string | undefined): number | undefined {
  if (!name || name === 'OK') return undefined;
  return validStatus(statusOfSimpleStatus(name));
}
