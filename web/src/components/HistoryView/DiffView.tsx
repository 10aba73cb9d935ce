import { useQuery } from "@tanstack/react-query";
import { errorText, queries, type TabDiff, type VersionDiff } from "../../api";
import { ErrorBox, Loading } from "../../ui";
import { cellText } from "./types";

// Changes reads and shows what a version changed against the version
// before it, or a run of versions since an older one (since 0: the one
// before).
export function Changes(p: { noteId: string; version: number; since: number; labels: Record<string, string> }) {
  const q = useQuery(queries.diff(p.noteId, p.version, p.since));
  if (q.isError) return <ErrorBox text={errorText(q.error)} onRetry={() => void q.refetch()} />;
  if (!q.data) return <Loading what="Reading what changed…" />;
  return <DiffView diff={q.data} labels={p.labels} />;
}

// DiffView is a diff as the server gave it: the title, then each tab with
// its lines, cells, sheets, slides or items; what the server left out is
// counted.
export function DiffView({ diff, labels }: { diff: VersionDiff; labels: Record<string, string> }) {
  if (diff.changes === 0) return <p className="muted diff-none">No change to the Note's content (its connected access, or nothing at all).</p>;
  return (
    <div className="diff">
      {diff.title ? (
        <p className="diff-title">
          Title: <del>{diff.title.before || "(none)"}</del> → <ins>{diff.title.after}</ins>
        </p>
      ) : null}
      {diff.tabs.map((t) => (
        <TabChanges key={t.tab_id} tab={t} label={t.label || labels[t.tab_id] || t.type} />
      ))}
      {diff.omitted > 0 ? (
        <p className="muted diff-omitted">
          … and {diff.omitted} more {diff.omitted === 1 ? "change" : "changes"} not shown.
        </p>
      ) : null}
    </div>
  );
}

const tabWord: Record<string, string> = { markdown: "Text", sheet: "Sheet", slides: "Slides", sources: "Sources", files: "Files" };

function TabChanges({ tab, label }: { tab: TabDiff; label: string }) {
  const notes: string[] = [];
  if (tab.change === "added") notes.push("added");
  if (tab.change === "deleted") notes.push("deleted");
  if (tab.label_before !== undefined) notes.push(`renamed from “${tab.label_before}”`);
  if (tab.moved) notes.push("moved in the strip");
  const cells = tab.cells ?? [];
  const manySheets = new Set(cells.map((c) => c.sheet_id)).size > 1;
  return (
    <section className="diff-tab" data-tab-id={tab.tab_id}>
      <h4>
        {label} <span className="muted">· {tabWord[tab.type] ?? tab.type}</span>
        {notes.length ? <span className="diff-badge">{notes.join(", ")}</span> : null}
      </h4>
      {tab.lines?.length ? (
        <ol className="diff-lines" aria-label={`Lines changed in ${label}`}>
          {tab.lines.map((l, i) => (
            <li key={i} className={l.op === "added" ? "diff-added" : "diff-removed"}>
              <span className="diff-ln" aria-hidden="true">
                {l.line}
              </span>
              <span className="sr-only">{l.op === "added" ? "Added" : "Removed"}: </span>
              {l.op === "added" ? <ins>{l.text || " "}</ins> : <del>{l.text || " "}</del>}
            </li>
          ))}
        </ol>
      ) : null}
      {tab.sheets?.length ? (
        <ul className="diff-items">
          {tab.sheets.map((s) => (
            <li key={s.id}>
              {s.change === "renamed" ? `Sheet “${s.fields?.[0]?.before ?? ""}” renamed “${s.name}”` : `Sheet “${s.name}” ${s.change}`}
            </li>
          ))}
        </ul>
      ) : null}
      {cells.length ? (
        <table className="diff-cells">
          <thead>
            <tr>
              <th scope="col">Cell</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {cells.map((c) => (
              <tr key={c.sheet_id + c.address}>
                <th scope="row">{manySheets ? `${c.sheet}!${c.address}` : c.address}</th>
                <td>
                  <del>{cellText(c.before)}</del>
                </td>
                <td>
                  <ins>{cellText(c.after)}</ins>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {[...(tab.slides ?? []), ...(tab.items ?? [])].length ? (
        <ul className="diff-items">
          {[...(tab.slides ?? []), ...(tab.items ?? [])].map((s) => (
            <li key={s.id}>
              <span>
                {itemWord(tab.type)} “{s.name || "Untitled"}” {s.change === "changed" && s.moved ? "changed and moved" : s.change}
              </span>
              {s.change !== "added" && s.fields?.length ? (
                <dl className="diff-fields">
                  {s.fields.map((f) => (
                    <div key={f.field}>
                      <dt>{f.field}</dt>
                      <dd>
                        <del>{f.before || "(empty)"}</del> → <ins>{f.after || "(empty)"}</ins>
                      </dd>
                    </div>
                  ))}
                </dl>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {tab.omitted ? (
        <p className="muted diff-omitted">
          … and {tab.omitted} more {tab.omitted === 1 ? "change" : "changes"} in this tab not shown.
        </p>
      ) : null}
    </section>
  );
}

function itemWord(type: string): string {
  return ({ slides: "Slide", sources: "Source", files: "File" } as Record<string, string>)[type] ?? "Item";
}
