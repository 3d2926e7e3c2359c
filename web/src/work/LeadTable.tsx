import type { ReactNode } from 'react';

/** One column of a table: its heading and what a row shows in it. The first column heads its row (`th scope="row"`). */
export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

/**
 * The leads pages' tables (the leads, an import's preview, the block list): one scrolling wrapper, column
 * headings with `scope="col"`, the first cell of each row its row heading, so a screen reader names each cell.
 */
export function DataTable<T>({ columns, rows, rowKey }: { columns: readonly Column<T>[]; rows: readonly T[]; rowKey: (row: T) => string }) {
  return (
    <div className="table-wrap">
      <table>
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
    </div>
  );
}

/** A lead's tags as small labels. */
export function Tags({ tags }: { tags: readonly string[] }) {
  return (
    <ul className="tags">
      {tags.map((t) => (
        <li key={t} className="tag">
          {t}
        </li>
      ))}
    </ul>
  );
}
