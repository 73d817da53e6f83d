import { describe, expect, it } from 'vitest';
import { JsonShapeCheck, parseJson } from '../../core/validation/json.js';

const size = { maxMembers: 6, maxArrayItems: 4 };

/** The refusal code of `text` fed to a JsonShapeCheck in pieces of `piece` bytes, or 'ok'. */
function streamed(text: string, piece: number): string {
  const check = new JsonShapeCheck(3, size);
  const bytes = Buffer.from(text);
  try {
    for (let i = 0; i < bytes.length; i += piece) check.push(bytes.subarray(i, i + piece));
    return 'ok';
  } catch (err) {
    return (err as { code: string }).code;
  }
}

/** The refusal code of parseJson on the whole text, or 'ok'. */
function whole(text: string): string {
  try {
    parseJson(text, undefined, 3, size);
    return 'ok';
  } catch (err) {
    return (err as { code: string }).code;
  }
}

describe('the JSON size bounds (limits.jsonMaxMembers, limits.jsonMaxArrayItems)', () => {
  const cases: [string, string][] = [
    // 1 object + 5 members = 6: at the bound.
    ['{"a":1,"b":2,"c":3,"d":4,"e":5}', 'ok'],
    ['{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}', 'JSON_TOO_MANY_MEMBERS'],
    // Colons, commas, brackets and escaped quotes inside strings are not structure.
    ['{"a":"x:y,z[{\\"q\\":1}]", "b":"\\\\", "c":"é:,"}', 'ok'],
    // 4 items in one array: at the bound; 5 over it.
    ['[1,2,3,4]', 'ok'],
    ['[1,2,3,4,5]', 'JSON_TOO_MANY_MEMBERS'],
    ['["a","b","c","d","e"]', 'JSON_TOO_MANY_MEMBERS'],
    // Commas between object members are not array items.
    ['[{"a":1,"b":2}]', 'ok'],
    ['[[[[1]]]]', 'JSON_TOO_DEEP'],
  ];

  it.each(cases)('%s → %s, whole or in pieces of any size', (text, expected) => {
    expect(whole(text)).toBe(expected);
    for (let piece = 1; piece <= Buffer.byteLength(text); piece++) expect(streamed(text, piece), `pieces of ${piece}`).toBe(expected);
  });

  // Strings longer than the byte-by-byte stretch are ended by a search (JsonShapeCheck's indexOf):
  // quotes after runs of backslashes, colons and brackets inside, at every split of the text.
  it('finds the end of long strings with escapes wherever the pieces split them', () => {
    for (let length = 24; length <= 72; length++) {
      for (const tail of ['\\"::,[{', '\\', '\\\\"', '"'.repeat(3), 'é:"\\']) {
        const value = 'x'.repeat(length) + tail;
        const atBound = JSON.stringify({ a: value, b: value, c: 1, d: 2, e: 3 });
        const over = JSON.stringify({ a: value, b: 1, c: 2, d: 3, e: 4, f: value });
        const texts: [string, string][] = [
          [atBound, 'ok'],
          [over, 'JSON_TOO_MANY_MEMBERS'],
        ];
        for (const [text, expected] of texts) {
          expect(whole(text)).toBe(expected);
          for (let piece = 1; piece <= Buffer.byteLength(text); piece++)
            expect(streamed(text, piece), `${text} in pieces of ${piece}`).toBe(expected);
        }
      }
    }
  });

  it('names the bound in the refusal', () => {
    expect(() => parseJson('[1,2,3,4,5]', 'config', 3, size)).toThrow(/config holds more than 4 array items/);
    expect(() => parseJson('{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}', undefined, 3, size)).toThrow(
      /body holds more than 6 JSON objects, arrays and object members/,
    );
  });
});
