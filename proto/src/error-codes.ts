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
