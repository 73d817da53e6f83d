/**
 * Loud skips. A suite that needs something outside Node (Java, Python packages, speech engines, MongoDB)
 * asks here first. On a developer machine a missing prerequisite skips the suite with a line saying
 * why; under CI (`CI=true`) it is a failure, because .ci/run installs everything.
 */
export interface Prerequisite {
  available: boolean;
  /** Why it is missing, shown in the skip line or the CI failure. */
  reason: string;
}

export const underCi = (): boolean => /^(1|true|yes)$/i.test(process.env.CI ?? '');

/**
 * Returns true when the suite may run. When it may not: throws under CI, otherwise prints one
 * `SKIPPED <suite>: <reason>` line to stderr and returns false (use with `describe.skipIf(!ok)`).
 */
export function requirePrerequisite(suite: string, prerequisite: Prerequisite): boolean {
  if (prerequisite.available) return true;
  const line = `SKIPPED ${suite}: ${prerequisite.reason}`;
  if (underCi()) throw new Error(`${line} (CI=true: missing prerequisites fail the run; .ci/run installs them)`);
  process.stderr.write(`\n*** ${line} ***\n`);
  return false;
}
