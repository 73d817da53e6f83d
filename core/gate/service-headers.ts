/**
 * The headers a service receives with a request, built in this one place for every path (HTTP
 * plugins, gRPC client calls, speech, async workers, fitting). The gateway sets who is calling;
 * a caller cannot: every `Z-…` and `PLATFORM-…` name a caller sends is removed, in any letter case,
 * except `PLATFORM-BILLING-KEY` (a billing key the caller holds, which services read). Services
 * trust these headers for identity and billing (reference/service-protocol.md section 3), so a
 * caller-sent `PLATFORM-BILLING-ACCOUNT-ID` or `z-calleraccountid` must never reach them.
 */
import { GateHeaders, type StringMap } from '../../proto/src/index.js';
import { gatewayError } from '../errors.js';

/** Headers a caller may pass to the service over HTTP (lower case → the name the service reads). */
const HTTP_PASSED: Readonly<Record<string, string>> = {
  [GateHeaders.billingKey.toLowerCase()]: GateHeaders.billingKey,
  [GateHeaders.contentHidden.toLowerCase()]: GateHeaders.contentHidden,
};

/** Caller names in the gateway's families that still pass (lower case). */
const CALLER_MAY_SEND = new Set([GateHeaders.billingKey.toLowerCase()]);

/** Whether `name` (any case) is the gateway's to set: the `Z-` and `PLATFORM-` families, and credentials. */
export function isGatewayHeader(name: string): boolean {
  const lower = name.toLowerCase();
  if (CALLER_MAY_SEND.has(lower)) return false;
  return lower.startsWith('z-') || lower.startsWith('platform-') || lower === 'authorization';
}

/** Characters no HTTP header may carry (RFC 9110 5.5). */
const CONTROL_CHARACTERS = /[\r\n\0]/;

/** Who a request is for, as the gateway established it. */
export interface ServiceIdentity {
  requestId: string;
  callerAccountId: number;
  /** The name of the API key the caller used; unknown for tasks stored before it was recorded. */
  keyName?: string;
}

/**
 * The headers for a service: what the caller may pass (`fromCaller`, gateway names removed), then the
 * gateway's own. `fromCaller` is never modified.
 */
export function serviceHeaders(identity: ServiceIdentity, fromCaller?: Readonly<StringMap>): StringMap {
  const headers: StringMap = {};
  if (fromCaller) {
    for (const name in fromCaller) {
      if (!Object.prototype.hasOwnProperty.call(fromCaller, name) || isGatewayHeader(name)) continue;
      const value = fromCaller[name];
      if (typeof value !== 'string') continue;
      // A gRPC caller's header map may carry any bytes; an engine behind the upstream connector gets
      // them as HTTP headers, where CR, LF and NUL would split or end a header: refused here, coded.
      if (CONTROL_CHARACTERS.test(value) || CONTROL_CHARACTERS.test(name))
        throw gatewayError('HEADER_VALUE_INVALID', { param: 'headers', args: { header: name.slice(0, 64) } });
      headers[name] = value;
    }
  }
  headers[GateHeaders.requestId] = identity.requestId;
  headers[GateHeaders.callerAccountId] = String(identity.callerAccountId);
  if (identity.keyName !== undefined) headers[GateHeaders.apiKeyName] = identity.keyName;
  return headers;
}

/** The headers of an HTTP request that services may read (an allow-list; Node gives names in lower case). */
export function httpCallerHeaders(requestHeaders: Readonly<Record<string, string | string[] | undefined>>): StringMap | undefined {
  let picked: StringMap | undefined;
  for (const lower in HTTP_PASSED) {
    const value = requestHeaders[lower];
    const text = Array.isArray(value) ? value.join(', ') : value;
    if (text) (picked ??= {})[HTTP_PASSED[lower]!] = text;
  }
  return picked;
}
