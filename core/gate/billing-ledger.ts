import type { Directory, ServiceEntry } from '../admission/directory.js';
import { boundForLog } from '../observe/log-fields.js';
import type { Logger } from '../observe/logger.js';
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

/** The in-memory list's bound when none is configured (`limits.billingLedgerBytes`). */
export const DEFAULT_LEDGER_BYTES = 16 * 1024 * 1024;
/** At most this many records, however small. */
const KEEP = 10_000;

/**
 * Deferred billing charges reported by services after the work, on any stream (requestId 0 allowed).
 * Each is logged (large fields cut, core/observe/log-fields.ts) and kept in an in-memory list that tests and
 * operators can read, bounded by count and by bytes (the records' JSON size): the oldest go first, and
 * a record larger than the whole bound is logged but not kept. Services decide the size of these
 * records, so without the byte bound 5 records of 20 MiB kept 100 MB.
 * Each charge is also emitted as a `billing` event for usage accounting and metrics.
 */
export class BillingLedger {
  readonly #records: { record: BillingRecord; bytes: number }[] = [];
  readonly #log: Logger;
  readonly #maxBytes: number;
  #bytes = 0;
  readonly #directory: Directory;
  readonly #events: GatewayEvents;

  constructor(log: Logger, directory: Directory, events: GatewayEvents, maxBytes = DEFAULT_LEDGER_BYTES) {
    this.#log = log.child({ component: 'billing' });
    this.#directory = directory;
    this.#events = events;
    this.#maxBytes = maxBytes;
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
    const bytes = JSON.stringify(record, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)).length;
    if (bytes <= this.#maxBytes) {
      this.#records.push({ record, bytes });
      this.#bytes += bytes;
      while (this.#bytes > this.#maxBytes || this.#records.length > KEEP) this.#bytes -= this.#records.shift()!.bytes;
    }
    this.#log.info({ billing: boundForLog(record), bytes }, 'deferred billing charge recorded');
    if (this.#events.has('billing')) this.#emit(service, record, callerAccountId);
    return record;
  }

  #emit(service: ServiceEntry, record: BillingRecord, callerAccountId: number | undefined): void {
    const base = { at: record.at, serviceId: service.id, service: serviceLabel(service) };
    if (record.amountInUnits !== undefined) {
      this.#events.emit('billing', {
        ...base,
        accountId: this.#known(callerAccountId),
        amount: Number(record.amountInUnits),
        idempotencyKey: record.billingRequestId || undefined,
      });
    }
    const params = record.params;
    const accountId = this.#known(
      numberOrUndefined(params?.billingAccountId) ?? numberOrUndefined(params?.callerAccountId) ?? callerAccountId,
    );
    for (const charge of record.charges ?? []) {
      this.#events.emit('billing', {
        ...base,
        accountId,
        amount: Number(charge.amount ?? 0),
        currency: charge.currency,
        idempotencyKey: charge.idempotencyKey || undefined,
      });
    }
  }

  /** Only accounts the gateway knows are charged: a service cannot invent one. */
  #known(accountId: number | undefined): number | undefined {
    return accountId !== undefined && this.#directory.findAccount(accountId) ? accountId : undefined;
  }

  list(): readonly BillingRecord[] {
    return this.#records.map((r) => r.record);
  }

  /** Bytes (JSON size) of the records kept. */
  get bytes(): number {
    return this.#bytes;
  }
}

function numberOrUndefined(value: unknown): number | undefined {
  const n = Number(value);
  return value === undefined || value === null || !Number.isFinite(n) || n === 0 ? undefined : n;
}
