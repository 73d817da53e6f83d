/** Error codes a model service sends as `ServiceToGateProto.error`, and gate codes the SDK reacts to. */
export const ServiceErrorCodes = {
  internalError: 'platform-action.common.internal-error',
  badRequest: 'platform-action.common.bad-request',
  processingException: 'platform-action.common.processing-exception',
  methodNotSupported: 'platform-action.common.method-not-supported',
  noPartialInBatch: 'platform-action.common.no-partial-in-batch',
  noRawPayloadInBatch: 'platform-action.common.no-raw-payload-in-batch',
  /** Sent for requests that arrive on a connection that is draining; clients retry on it. */
  channelClosed: 'platform-action.common.channel-closed-error',
  /** From the gate: the connection token is unknown. Fatal for that connection. */
  instanceByTokenNotFound: 'platform.gate.instance_by_token_not_found',
} as const;

/** Codes of the service SDKs that mean a client mistake (400) when the error carries no status of its own. */
export const CLIENT_ERROR_CODES: ReadonlySet<string> = new Set<string>([
  ServiceErrorCodes.badRequest,
  ServiceErrorCodes.methodNotSupported,
  ServiceErrorCodes.noPartialInBatch,
  ServiceErrorCodes.noRawPayloadInBatch,
]);

/**
 * Args of a service error that relays an HTTP upstream's error exactly (a proxy in front of an
 * engine): `relayed: "true"` marks it; `dialect` says whose error body the upstream sent (`openai` or
 * `anthropic`); `type`, `code` and `param` are the upstream's (absent when it sent null);
 * `headerPrefix + <name>` carries each of its retry and rate-limit headers; `requestId` its request
 * id. The gateway answers HTTP callers with them instead of ordinary args.
 */
export const UpstreamErrorArgs = {
  relayed: 'upstream.relayed',
  dialect: 'upstream.dialect',
  type: 'upstream.type',
  code: 'upstream.code',
  param: 'upstream.param',
  headerPrefix: 'upstream.header.',
  requestId: 'upstream.request_id',
} as const;
