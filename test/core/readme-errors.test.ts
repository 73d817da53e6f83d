import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../core/errors.js';

/** docs/errors.md is the user's reference of error codes: every code of the catalog must be in its table. */
describe('error reference (docs/errors.md)', () => {
  it('documents every error code of the catalog', () => {
    const reference = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const missing = Object.keys(ERROR_CATALOG).filter((code) => !reference.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });
});
