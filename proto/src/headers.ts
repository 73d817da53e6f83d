/**
 * Names of the headers that travel in the Gate messages' `headers` maps, between the gateway and
 * model services. Gateway-set ones (caller, key name, billing, derived routing) are set only by the
 * gateway: a caller's own values for them are dropped.
 */
export const GateHeaders = {
  /** Correlation ID of one request; the service echoes it back. */
  requestId: 'Z-requestId',
  /** The caller's account ID. */
  callerAccountId: 'Z-callerAccountId',
  /** Milliseconds the service spent on the request, set by the SDK on final answers. */
  serverTime: 'Z-Server-Time',
  /** Name (never the value) of the platform API key the caller used. */
  apiKeyName: 'PLATFORM-API-KEY-NAME',
  /** Billing headers a caller may pass through to the service. */
  billingKey: 'PLATFORM-BILLING-KEY',
  billingKeyName: 'PLATFORM-BILLING-KEY-NAME',
  billingAccountId: 'PLATFORM-BILLING-ACCOUNT-ID',
  billingUserId: 'PLATFORM-BILLING-USER-ID',
  /** Asks the service to keep the request's content out of its logs; passed through. */
  contentHidden: 'Content-Hidden',
  /** On requests for a derived (fitted) service: the fitted model's directory, the derived service and its account. */
  fittedModelDir: 'PLATFORM-FITTED-MODEL-DIR',
  derivedServiceId: 'PLATFORM-DERIVED-SERVICE-ID',
  derivedAccountId: 'PLATFORM-DERIVED-ACCOUNT-ID',
  /** On a `fit` request: the fitting job's ID. */
  fitJobId: 'PLATFORM-FIT-JOB-ID',
  /**
   * On the gateway's `serviceInfo`: it takes a bulk lane (a second `processAsync` stream of the same
   * instance) and writes there each request of at least this many bytes. Absent: no lane.
   */
  bulkLaneBytes: 'Z-bulkLaneBytes',
  /** On a `startServing`: the stream is the bulk lane (`bulk`) of the registered instance with its boot UUID. */
  lane: 'Z-lane',
} as const;

/** The value of the `Z-lane` header that opens a bulk lane. */
export const BULK_LANE = 'bulk';

/** The HTTP header that carries a platform API key (clients send it; it is never passed on). */
export const API_KEY_HEADER = 'PLATFORM-API-KEY';

export const REQUEST_ID_HEADER = GateHeaders.requestId;
export const SERVER_TIME_HEADER = GateHeaders.serverTime;
export const FITTED_MODEL_DIR_HEADER = GateHeaders.fittedModelDir;
export const DERIVED_SERVICE_ID_HEADER = GateHeaders.derivedServiceId;
export const DERIVED_ACCOUNT_ID_HEADER = GateHeaders.derivedAccountId;
