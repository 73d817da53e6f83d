/**
 * Fallbacks: which failures of a request may go to the next service of its chain, and how the
 * request is re-addressed to it. Pure functions; the Gate applies them (docs/routing.md).
 */
import type { ServiceEntry } from '../admission/directory.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { PredictRequestProto } from '../../proto/src/index.js';
import { parsedValueOf, withParsedValue } from './parsed-payload.js';

/** One service of a fallback chain, and the model to ask it for (its default when absent). */
export interface FallbackTarget {
  readonly service: ServiceEntry;
  readonly model?: string;
}

/** Backoff before the n-th retry (n from 1): 50, 100, 200… ms, capped. */
export function backoffMs(attempt: number): number {
  return Math.min(50 * 2 ** (attempt - 1), 1000);
}

/** Codes that mean "this service could not answer now", whatever their status. */
const MOVE_ON = new Set(['NO_ACTIVE_INSTANCES', 'SERVICE_DISCONNECTED', 'UPSTREAM_UNREACHABLE', 'UPSTREAM_TIMEOUT', 'GATE_IS_SHUT_DOWN']);

/**
 * Whether a failure before the first answer may be retried on the next service: no instance, a
 * connection error, a timeout before the first byte, a 5xx or a 429. Never a caller's mistake (4xx),
 * a cancel, a permanent error, or the request's own deadline (no time is left for another try).
 */
export function isRetryable(error: GatewayError): boolean {
  if (MOVE_ON.has(error.code)) return true;
  if (error.permanent || error.code === 'PREDICT_TIMEOUT' || error.code === 'REQUEST_CANCELED') return false;
  return error.status === 429 || (error.status >= 500 && error.status !== 501);
}

/**
 * The predict of the original request, for a fallback: a JSON-object data gets the target's model
 * as its `model` member, or loses that member when the target names none (so the target uses its
 * default). Other data is sent unchanged. A payload that carries its parsed value (parsed-payload.ts)
 * is not parsed again, and the new payload carries the new value.
 */
export function retargetPredict(predict: PredictRequestProto, model: string | undefined): PredictRequestProto {
  const json = predict.data?.json;
  if (!json || (model === undefined && !json.includes('"model"'))) return predict;
  let data = parsedValueOf(predict.data);
  if (data === undefined) {
    try {
      data = JSON.parse(json);
    } catch {
      return predict;
    }
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return predict;
  const copy = { ...(data as Record<string, unknown>) };
  if (model === undefined) delete copy.model;
  else copy.model = model;
  // The copy's own parsed value: the original's (spread with the payload) would no longer match its text.
  return { ...predict, data: withParsedValue({ ...predict.data, json: JSON.stringify(copy) }, copy) };
}

/** `<author>/<service>[/model]` of a target, as answers name who served them. */
export function targetName(target: FallbackTarget): string {
  const base = `${target.service.account.name}/${target.service.name}`;
  return target.model ? `${base}/${target.model}` : base;
}

/** The registry check of a predict config (Pipeline.validateConfig): throws a 400 GatewayError. */
export interface TargetConfigCheck {
  validateConfig(service: ServiceEntry, config: unknown, modelName?: string): void;
}

/**
 * Why `target` may not take the request, checked before it is tried; undefined when it may. A
 * fallback is checked as the service a caller addressed directly is: the caller (`callerAccountId`)
 * may call it (its owner, or it is public), and the request's config fits the target's registry
 * model. Without this a caller reached another account's private service, or sent a target a config
 * it refuses when sent directly, through a fallback. The reason names no service the caller may not see.
 */
export function unfitReason(
  target: FallbackTarget,
  predict: PredictRequestProto,
  callerAccountId: number,
  check: TargetConfigCheck | undefined,
): string | undefined {
  const { service } = target;
  if (!service.public && service.accountId !== callerAccountId) return 'a fallback this caller may not call';
  if (!check) return undefined;
  let config: unknown;
  const json = predict.config?.json;
  if (json) {
    try {
      config = JSON.parse(json);
    } catch {
      return `${targetName(target)}: the config is not JSON`;
    }
  }
  try {
    check.validateConfig(service, config, target.model);
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    return `${targetName(target)}: ${err.message}`;
  }
  return undefined;
}

/** `error` with the fallbacks that were skipped, and why, at the end of its message. */
export function withSkipped(error: GatewayError, skipped: readonly string[]): GatewayError {
  if (skipped.length === 0) return error;
  return new GatewayError({
    code: error.code,
    status: error.status,
    type: error.type,
    message: `${error.message} (fallbacks skipped: ${skipped.join('; ')})`,
    param: error.param,
    args: error.args,
    expose: error.expose,
    permanent: error.permanent,
    grpcCode: error.grpcCode,
    cause: error.cause,
    retryAfterSec: error.retryAfterSec,
    headers: { ...error.headers },
    upstream: error.upstream,
  });
}
