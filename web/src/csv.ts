/**
 * A table as CSV (RFC 4180): fields separated by commas, records by CRLF, a field holding a comma, a double quote, CR
 * or LF quoted with its quotes doubled. A text cell a spreadsheet would run as a formula (starting with =, +, -, @, a
 * tab or CR) gets a leading apostrophe first, so an opened file never runs a name someone typed into a lead or a
 * variant. Numbers are written as numbers (a number is never a formula); null and undefined are empty cells.
 */
export type CsvCell = string | number | boolean | null | undefined;

const FORMULA = /^[=+\-@\t\r]/;

export function csvField(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  let text = typeof cell === 'number' ? (Number.isFinite(cell) ? String(cell) : '') : String(cell);
  if (typeof cell === 'string' && FORMULA.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The header and rows as one CSV text, every record ending with CRLF. */
export function toCsv(header: readonly CsvCell[], rows: readonly (readonly CsvCell[])[]): string {
  return [header, ...rows].map((r) => `${r.map(csvField).join(',')}\r\n`).join('');
}
