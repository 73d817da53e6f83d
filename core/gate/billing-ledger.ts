import type { Directory, ServiceEntry } from '../directory.js';
import type { Logger } from '../logger.js';
import type { GatewayEvents } from '../observe/events.js';
import type { DeferredBillingChargeProto, DeferredBillingParamsProto, ServiceToGateProto } from '../../proto/src/index.js';
import { serviceLabel } from './service-label.js';

export interface BillingRecord {
  at: number;
  serviceId: number;
  requestId: number;
  /** `deferredBillingCharge`: one amount for an earlier request's billing ID. */
  billingRequestId?: string;
  amountInUnits?: number;
  /** `deferredBillingCharges`: itemised charges with their billing parameters. */
  charges?: DeferredBillingChargeProto[];
  params?: DeferredBillingParamsProto;
}

/** How many records are kept in memory; the log line of each record is the durable trail. */
const KEEP = 10_000;

/**
 * Deferred billing charges reported by services after the work, on any stream (requestId 0 allowed).
 * Each is logged, kept in a bounded in-memory list that tests and operators can read, and emitted
 * as `billing` events (one per charge) for usage accounting and metrics.
 */
export class BillingLedger {
  readonly #records: BillingRecord[] = [];
  readonly #log: Logger;
  readonly #directory: Directory;
  readonly #events: GatewayEvents;

  constructor(log: Logger, directory: Directory, events: GatewayEvents) {
    this.#log = log.child({ component: 'billing' });
    this.#directory = directory;
    this.#events = events;
  }

  /** `callerAccountId`: the account of the request the message answers, when the Gate knows it. */
  record(service: ServiceEntry, message: ServiceToGateProto, callerAccountId?: number): BillingRecord {
    const record: BillingRecord = {
      at: Date.now(),
      serviceId: service.id,
      requestId: Number(message.requestId ?? 0),
      billingRequestId: message.deferredBillingCharge?.billingRequestId,
      amountInUnits: message.deferredBillingCharge?.amountInUnits,
      charges: message.deferredBillingCharges?.charges,
      params: message.deferredBillingCharges?.params,
    };
    this.#records.push(record);
    if (this.#records.length > KEEP) this.#records.splice(0, this.#records.length - KEEP);
    this.#log.info({ billing: record }, 'deferred billing charge recorded');
    if (this.#events.has('billing')) this.#emit(service, record, callerAccountId);
    return record;
  }

  #emit(service: ServiceEntry, record: BillingRecord, callerAccountId: number | undefined): void {
    const base = { at: record.at, serviceId: service.id, service: serviceLabel(service) };
    if (record.amountInUnits !== undefined) {
      this.#events.emit('billing', { ...base, accountId: this.#known(callerAccountId), amount: Number(record.amountInUnits), idempotencyKey: record.billingRequestId || undefined });
    }
    const params = record.params;
    const accountId = this.#known(numberOrUndefined(params?.billingAccountId) ?? numberOrUndefined(params?.callerAccountId) ?? callerAccountId);
    for (const charge of record.charges ?? []) {
      this.#events.emit('billing', { ...base, accountId, amount: Number(charge.amount ?? 0), currency: charge.currency, idempotencyKey: charge.idempotencyKey || undefined });
    }
  }

  /** Only accounts the gateway knows are charged: a service cannot invent one. */
  #known(accountId: number | undefined): number | undefined {
    return accountId !== undefined && this.#directory.findAccount(accountId) ? accountId : undefined;
  }

  list(): readonly BillingRecord[] {
    return this.#records;
  }
}

function numberOrUndefined(value: unknown): number | undefined {
  const n = Number(value);
  return value === undefined || value === null || !Number.isFinite(n) || n === 0 ? undefined : n;
}
