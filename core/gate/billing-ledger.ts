import type { ServiceEntry } from '../directory.js';
import type { Logger } from '../logger.js';
import type { DeferredBillingChargeProto, DeferredBillingParamsProto, ServiceToGateProto } from '../../proto/src/index.js';

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
 * Each is logged and kept in a bounded in-memory list that tests and operators can read.
 */
export class BillingLedger {
  readonly #records: BillingRecord[] = [];
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log.child({ component: 'billing' });
  }

  record(service: ServiceEntry, message: ServiceToGateProto): BillingRecord {
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
    return record;
  }

  list(): readonly BillingRecord[] {
    return this.#records;
  }
}
