import type { ReactNode } from 'react';

/** One column of a table: its heading and what a row shows in it. The first column heads its row (`th scope="row"`). */
export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

/**
 * The dashboard's data tables (the leads, an import's preview, the block list, the scoreboard's figures): one scrolling
 * wrapper, column headings with `scope="col"`, the first cell of each row its row heading, so a screen reader names
 * each cell. With a `label` (a table wider than its card) the wrapper is a region the keyboard can scroll (focusable),
 * named for the table, and the label is the table's caption too (for a screen reader's table list).
 */
export function DataTable<T>({
  columns,
  rows,
  rowKey,
  label,
}: {
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  label?: string;
}) {
  const table = (
    <table>
      {label ? <caption className="visually-hidden">{label}</caption> : null}
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header} scope="col">
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)}>
            {columns.map((c, i) =>
              i === 0 ? (
                <th key={c.header} scope="row">
                  {c.cell(row)}
                </th>
              ) : (
                <td key={c.header}>{c.cell(row)}</td>
              ),
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
  return label ? (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled by keys
    <section className="table-wrap" aria-label={label} tabIndex={0}>
      {table}
    </section>
  ) : (
    <div className="table-wrap">{table}</div>
  );
}
