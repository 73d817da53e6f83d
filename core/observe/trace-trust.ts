/**
 * Whose W3C sampled flag tracing follows (issue 25 N11): a caller's `traceparent … -01` used to force
 * a recorded trace of every request, even with a wrong key. Now a request's own sampling is followed
 * only when it carries an API key whose config says `followTraceSampling: true`, of an account not
 * blocked; everyone else is sampled at `tracing.sampleRatio`, on a draw the caller cannot steer.
 * The key is looked up here, before the request's span starts (the span's sampling is fixed then),
 * from every header a route reads keys from; admission still checks it as always.
 */
import type { Directory } from '../admission/directory.js';

/** True when the request (its headers, by lower-case name) may decide whether it is traced. */
export type TraceTrust = (header: (name: string) => string) => boolean;

const BEARER = /^bearer\s+/i;

/** The keys a request carries, in the headers the routes read them from (platform, OpenAI and Anthropic clients). */
function presentedKeys(header: (name: string) => string): string[] {
  const keys: string[] = [];
  const authorization = header('authorization').trim();
  if (authorization) keys.push(authorization.replace(BEARER, '').trim());
  for (const name of ['platform-api-key', 'x-api-key']) {
    const key = header(name).trim();
    if (key) keys.push(key);
  }
  return keys;
}

export function traceTrust(directory: Directory): TraceTrust {
  return (header) =>
    presentedKeys(header).some((key) => {
      const caller = directory.callerForKey(key);
      return caller !== undefined && caller.followTraceSampling === true && !caller.account.blocked;
    });
}
