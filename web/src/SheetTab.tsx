import type { TabProps } from "./tabs";

// The sheet tab.

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  return String(v);
}

export function SheetTab({ content }: TabProps) {
  const sheets = content.sheets ?? [];
  if (sheets.length === 0) return <div className="empty"><p>This sheet tab has no sheets yet.</p></div>;
  return (
    <div className="sheets-read">
      {sheets.map((s) => {
        const rows = s.cells ?? [];
        const cols = rows.reduce((m, r) => Math.max(m, r?.length ?? 0), 0);
        return (
          <div key={s.sheet_id} className="sheet-read" role="region" aria-label={"Sheet " + s.name} tabIndex={0}>
            <h2>{s.name}</h2>
            {rows.length === 0 ? (
              <p className="muted">This sheet is empty.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">
                      <span className="sr-only">Row</span>
                    </th>
                    {Array.from({ length: cols }, (_, c) => (
                      <th key={c} scope="col">
                        {colName(c)}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r, i) => (
                    <tr key={i}>
                      <th scope="row">{i + 1}</th>
                      {Array.from({ length: cols }, (_, c) => (
                        <td key={c}>{cellText(r?.[c])}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
        );
      })}
    </div>
  );
}

function colName(c: number): string {
  let s = "";
  let n = c + 1;
  while (n > 0) {
    const m = (n - 1) % 26;
    s = String.fromCharCode(65 + m) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

