/** Per-account caps of spec section 8, both derived from the account's requests-per-second setting. */

/** Tasks waiting in the queue (QUEUED) per account. */
export const MAX_QUEUED_CAP = 250;
/** Tasks running at once (PROCESSING) per account. */
export const MAX_RUNNING_CAP = 50;

export const queuedCap = (requestsPerSecond: number): number => Math.min(requestsPerSecond, MAX_QUEUED_CAP);
export const runningCap = (requestsPerSecond: number): number => Math.min(requestsPerSecond, MAX_RUNNING_CAP);
