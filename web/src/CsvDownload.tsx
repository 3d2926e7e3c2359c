import { type CsvCell, toCsv } from './csv';

/**
 * A "Download CSV" button for a table on the page: builds the file from the rows it is given (csv.ts: RFC 4180,
 * formula cells defused) and saves it as `<name>.csv` through a temporary object URL, nothing fetched.
 */
export function CsvDownload({
  name,
  header,
  rows,
  label = 'Download CSV',
}: {
  name: string;
  header: readonly CsvCell[];
  rows: readonly (readonly CsvCell[])[];
  label?: string;
}) {
  const save = () => {
    const url = URL.createObjectURL(new Blob([toCsv(header, rows)], { type: 'text/csv;charset=utf-8' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${name.replace(/[^\w.-]+/g, '-')}.csv`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  };
  return (
    <button type="button" className="small-button" onClick={save}>
      {label}
    </button>
  );
}
