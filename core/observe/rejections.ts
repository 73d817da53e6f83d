import type { GatewayError } from '../errors.js';

/** A refusal because a limit was reached (rate limit, quota): counted by code in the metrics. */
export function isLimitRejection(err: GatewayError): boolean {
  return err.status === 429 || err.code.includes('QUOTA');
}
