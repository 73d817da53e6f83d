import type { ServiceEntry } from '../admission/directory.js';
import { gatewayError, type GatewayError } from '../errors.js';
import type { Logger } from '../observe/logger.js';
import { GateHeaders, type PredictRequestProto, type StringMap } from '../../proto/src/index.js';
import type { CallTable } from './call-table.js';
import {
  backoffMs,
  isRetryable,
  retargetPredict,
  targetName,
  unfitReason,
  withSkipped,
  type FallbackTarget,
  type TargetConfigCheck,
} from './failover.js';
import type { Instance } from './instance.js';
import type { InstancePool } from './instance-pool.js';
import type { ServiceCall } from './service-call.js';
import type { Routed, ServiceRoutes } from './service-routes.js';

/** What `pick` found: the instance to send to, the service it serves, and the chain left for retries. */
export interface Picked {
  readonly instance: Instance;
  readonly routed: Routed;
  /** The fallback that takes the request; undefined when the addressed service's instance does. */
  readonly fallback: FallbackTarget | undefined;
  /** The predict, re-addressed to the fallback's model when a fallback takes it. */
  readonly predict: PredictRequestProto | undefined;
  readonly rest: readonly FallbackTarget[];
  readonly skipped: readonly string[];
}

/** A call that may still move: what a retry needs. Kept only for calls with services left to try. */
interface Pending {
  readonly predict: PredictRequestProto;
  /** The headers as first sent: each fallback is routed afresh from them. */
  readonly headers: StringMap;
  readonly chain: FallbackTarget[];
  readonly skipped: string[];
  /** Whose request it is, for the access check of each fallback. */
  readonly callerAccountId: number;
  attempts: number;
  readonly deadline: number;
  retry: NodeJS.Timeout | undefined;
}

const NONE: readonly string[] = [];

export interface FailoverParts {
  readonly pool: InstancePool;
  readonly table: CallTable;
  readonly routes: ServiceRoutes;
  readonly retryBudget: number;
  readonly log: Logger;
  /** Whether the Gate is shutting down (no retry then). */
  readonly closed: () => boolean;
}

/**
 * Failover around `open` (docs/routing.md): a predict whose service has no instance goes to the first
 * fallback of its chain that has one; a predict that fails before its first answer frame, with a
 * failure a retry may fix, goes to the next one after a backoff, within the retry budget and its
 * deadline. The state a retry needs lives here, only for calls that have services left to try.
 */
export class Failover {
  readonly #parts: FailoverParts;
  readonly #pending = new Map<number, Pending>();
  /** The registry check each fallback target's config must pass before it is tried. */
  #targetCheck: TargetConfigCheck | undefined;

  constructor(parts: FailoverParts) {
    this.#parts = parts;
  }

  checkConfigsWith(check: TargetConfigCheck): void {
    this.#targetCheck = check;
  }

  /**
   * The instance that takes a request: one of the addressed service, else (a predict only: other
   * requests carry more than one message) one of the first fallback that has one and may take it.
   * Throws NO_ACTIVE_INSTANCES (naming the fallbacks skipped, and why) when none can.
   */
  pick(
    service: ServiceEntry,
    predict: PredictRequestProto | undefined,
    chain: readonly FallbackTarget[],
    headers: StringMap | undefined,
    model?: string,
    affinityKey?: string,
  ): Picked {
    const { pool, routes } = this.#parts;
    let routed = routes.route(service, headers);
    let instance = pool.pick(routed.target.id, model, affinityKey);
    if (instance) return { instance, routed, fallback: undefined, predict, rest: predict ? chain : [], skipped: NONE };
    const noInstance =
      routed.target === service
        ? gatewayError('NO_ACTIVE_INSTANCES', { args: { service: service.name } })
        : gatewayError('NO_ACTIVE_INSTANCES', {
            args: { service: service.name },
            message: `Service '${service.name}' is served by '${routed.target.name}', which has no active instances`,
          });
    const skipped: string[] = [];
    for (let i = 0; predict && i < chain.length; i++) {
      const next = chain[i]!;
      const unfit = unfitReason(next, predict, callerAccountOf(headers, service), this.#targetCheck);
      if (unfit) {
        skipped.push(unfit);
        continue;
      }
      routed = routes.route(next.service, headers);
      instance = pool.pick(routed.target.id, next.model);
      if (!instance) continue;
      const moved = next.service !== service;
      if (moved) this.#parts.log.info({ service: service.name, servedBy: targetName(next) }, 'no instance; the request goes to a fallback');
      return {
        instance,
        routed,
        fallback: next,
        predict: moved ? retargetPredict(predict, next.model) : predict,
        rest: chain.slice(i + 1),
        skipped,
      };
    }
    throw withSkipped(noInstance, skipped);
  }

  /** Keeps what a retry of `call` needs, when it has services left to try. */
  track(call: ServiceCall, service: ServiceEntry, picked: Picked, sentHeaders: StringMap, timeoutMs: number): void {
    const { predict, rest } = picked;
    if (!predict || rest.length === 0 || call.settled) return;
    this.#pending.set(call.requestId, {
      predict,
      headers: sentHeaders,
      chain: [...rest],
      skipped: [...picked.skipped],
      callerAccountId: callerAccountOf(sentHeaders, service),
      attempts: 0,
      deadline: timeoutMs > 0 ? Date.now() + timeoutMs : Infinity,
      retry: undefined,
    });
  }

  /** The call settled: its retry state goes. */
  released(call: ServiceCall): void {
    if (this.#pending.size === 0) return;
    const pending = this.#pending.get(call.requestId);
    if (!pending) return;
    if (pending.retry) clearTimeout(pending.retry);
    this.#pending.delete(call.requestId);
  }

  /**
   * Sends a failed predict to the next service of its chain, after a backoff, when nothing of the
   * answer has reached the caller yet, the failure is one a retry may fix, the retry budget allows
   * and the deadline leaves time. True when the call goes on (the caller sees nothing of the failure).
   */
  retry(call: ServiceCall, error: GatewayError): boolean {
    const pending = this.#pending.size === 0 ? undefined : this.#pending.get(call.requestId);
    if (!pending || call.settled || call.answered || pending.chain.length === 0) return false;
    if (pending.attempts >= this.#parts.retryBudget || !isRetryable(error)) return false;
    const wait = backoffMs(++pending.attempts);
    if (Date.now() + wait >= pending.deadline) return false;
    this.#parts.table.moveTo(call, undefined);
    this.#parts.log.info(
      { requestId: call.requestId, code: error.code, attempt: pending.attempts, next: targetName(pending.chain[0]!) },
      'request failed before its answer; trying the next service',
    );
    pending.retry = setTimeout(() => {
      pending.retry = undefined;
      if (this.#pending.get(call.requestId) === pending && !call.settled) this.#resend(call, pending, error);
    }, wait);
    return true;
  }

  /** Sends the request of a call in its backoff to the first service of its chain that has an instance. */
  #resend(call: ServiceCall, pending: Pending, lastError: GatewayError): void {
    const { pool, routes, table } = this.#parts;
    for (let next = pending.chain.shift(); next; next = pending.chain.shift()) {
      const unfit = unfitReason(next, pending.predict, pending.callerAccountId, this.#targetCheck);
      if (unfit) {
        pending.skipped.push(unfit);
        continue;
      }
      let routed: Routed;
      try {
        routed = routes.route(next.service, pending.headers);
      } catch (err) {
        lastError = err as GatewayError;
        continue;
      }
      const instance = this.#parts.closed() ? undefined : pool.pick(routed.target.id, next.model);
      if (!instance) {
        lastError = gatewayError('NO_ACTIVE_INSTANCES', { args: { service: next.service.name } });
        continue;
      }
      table.moveTo(call, instance);
      call.serviceId = routed.target.id;
      call.servedBy = { name: targetName(next), instance: instance.bootUuid, fallback: true };
      const predict = retargetPredict(pending.predict, next.model);
      if (instance.send({ requestId: call.requestId, headers: routed.headers, predict })) return;
      table.moveTo(call, undefined);
      lastError = gatewayError('SERVICE_DISCONNECTED', { args: { service: next.service.name } });
    }
    call.fail(withSkipped(lastError, pending.skipped));
  }
}

/** The caller's account, as the gateway set it in the service headers; else the addressed service's owner. */
function callerAccountOf(headers: StringMap | undefined, service: ServiceEntry): number {
  const id = Number(headers?.[GateHeaders.callerAccountId]);
  return Number.isInteger(id) ? id : service.accountId;
}
