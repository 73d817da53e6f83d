/**
 * One code for an engine outage on the chat adapters. An HTTP engine that is down is first a failed
 * call (`UPSTREAM_UNREACHABLE`, the connection refused or not taken in time) and then, once its
 * health check takes it out of routing, a service with no instance (`NO_ACTIVE_INSTANCES`). Callers
 * of the OpenAI and Anthropic SDKs get both as 503 `SERVICE_UNAVAILABLE` with `Retry-After`, which
 * the SDKs retry, with the moment named in the message and the `reason` arg (docs/errors.md).
 */
import { gatewayError, type GatewayError } from '../../../core/plugins/index.js';

/** Why a service had no instance to take the call: not connected, or its engine out of routing. */
export const NO_INSTANCE_REASON = 'no instance is in routing (none connected, or its engine failed its health check)';

/** The error a chat adapter answers for `err`: an outage as SERVICE_UNAVAILABLE, anything else as it is. */
export function asOutage(err: GatewayError, serviceName: string): GatewayError {
  if (err.code === 'NO_ACTIVE_INSTANCES')
    return gatewayError('SERVICE_UNAVAILABLE', { args: { service: serviceName, reason: NO_INSTANCE_REASON } });
  if (err.code === 'UPSTREAM_UNREACHABLE') {
    return gatewayError('SERVICE_UNAVAILABLE', {
      args: { service: serviceName, reason: `its engine cannot be reached (${err.args.reason ?? 'no connection'})` },
      cause: err,
    });
  }
  return err;
}
