/**
 * Errors in the Anthropic Messages API's shape (responses-and-messages.md B.4), for the `/v1/messages`
 * routes: `{"type":"error","error":{"type","message"},"request_id"}` with Anthropic's type names, so
 * the Anthropic SDKs raise the class that matches the status and set `.type`.
 */
import { type GatewayError } from '../../../core/plugins/index.js';

/** Anthropic's error types; an upstream Anthropic error keeps its own. */
const ANTHROPIC_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

export function anthropicErrorType(err: GatewayError): string {
  const relayed = err.upstream?.type;
  if (relayed && ANTHROPIC_TYPES.has(relayed)) return relayed;
  switch (err.status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return err.status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/** The message a caller may see (internal errors show a generic text, as in the one envelope). */
const visibleMessage = (err: GatewayError): string => (err.expose ? err.message : 'Internal gateway error');

/** The error body of a `/v1/messages` route (HTTP status and headers come from the error middleware). */
export function renderAnthropicError(err: GatewayError, requestId: string): unknown {
  return { type: 'error', error: { type: anthropicErrorType(err), message: visibleMessage(err) }, request_id: requestId };
}

/** The same error as the data of a mid-stream `event: error`. */
export function anthropicErrorData(err: GatewayError): string {
  return JSON.stringify({ type: 'error', error: { type: anthropicErrorType(err), message: visibleMessage(err) } });
}
