import { describe, expect, it } from 'vitest';
import { csvField, toCsv } from '../../web/src/csv.js';

/** The dashboard's CSV downloads (web/src/csv.ts): RFC 4180 quoting, CRLF records, formula cells defused. */
describe('a table as CSV', () => {
  it('quotes fields with commas, quotes and line breaks, doubling quotes; ends every record with CRLF', () => {
    expect(
      toCsv(
        ['name', 'note'],
        [
          ['Acme, Inc.', 'said "hi"\nthen left'],
          ['plain', 3],
        ],
      ),
    ).toBe('name,note\r\n"Acme, Inc.","said ""hi""\nthen left"\r\nplain,3\r\n');
  });

  it('writes numbers as numbers, null as an empty cell (unknown is not zero: 0 stays 0)', () => {
    expect([0, 1.5, -2, null, undefined, Number.NaN].map(csvField)).toEqual(['0', '1.5', '-2', '', '', '']);
    expect(csvField(true)).toBe('true');
  });

  it('puts an apostrophe before a text cell a spreadsheet would run as a formula', () => {
    expect(['=1+1', '+SUM(A1)', '-2+3', '@cmd', '\tx', 'a=b'].map(csvField)).toEqual([
      "'=1+1",
      "'+SUM(A1)",
      "'-2+3",
      "'@cmd",
      "'\tx",
      'a=b',
    ]);
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
  });
});
