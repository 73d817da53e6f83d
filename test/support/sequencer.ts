import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest in `npm test` on a 2-core machine (20 s to 80 s each), longest first.
 * vitest orders a run by the durations of the previous one, or, in a fresh clone (CI) that has none,
 * by file size, and these files are not the largest: one that starts late keeps a worker busy alone
 * after every other file has finished. An order only: every file runs either way.
 */
const LONGEST = [
  'test/packages/fresh-clone.test.ts',
  'test/bench/smoke.test.ts',
  'test/agents/coding-agents.test.ts',
  'test/docs/examples.test.ts',
  'test/ops/shared-limits.test.ts',
  'test/plugins/console/browser.test.ts',
];

/** vitest's order, with the files of LONGEST moved to the front in that order. */
export class LongestFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const index = LONGEST.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
      return index < 0 ? LONGEST.length : index;
    };
    // Array.prototype.sort is stable: the other files keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
