import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../core/errors.js';

/** The README's error table is the user's reference: every code of the catalog must be in it. */
describe('README error reference', () => {
  it('documents every error code of the catalog', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const missing = Object.keys(ERROR_CATALOG).filter((code) => !readme.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });
});
