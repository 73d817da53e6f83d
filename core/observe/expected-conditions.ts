import type { GatewayError } from '../errors.js';

/**
 * Failures a running gateway meets in normal operation: no instance (yet), an engine that is down or
 * slow, a deadline, a shutdown, an engine's own error relayed. They are logged at `warn` on one line
 * without a stack (the stack would show only where the gateway noticed, and dozens of lines of it per
 * request drown the failures that are bugs, which keep `error` and their stack).
 */
const EXPECTED = new Set([
  'NO_INSTANCE_IN_TIME',
  'SERVICE_UNAVAILABLE',
  'NO_ACTIVE_INSTANCES',
  'SERVICE_DISCONNECTED',
  'GATE_IS_SHUT_DOWN',
  'PREDICT_TIMEOUT',
  'STREAM_FIRST_CHUNK_TIMEOUT',
  'STREAM_IDLE_TIMEOUT',
  'UPSTREAM_UNREACHABLE',
  'UPSTREAM_TIMEOUT',
]);

export function isExpectedCondition(err: GatewayError): boolean {
  return EXPECTED.has(err.code) || err.upstream !== undefined;
}
