import { useMemo } from "react";
import { useQuery } from "@tanstack/react-query";
import { errorText, queries } from "../../api";
import { ErrorBox, Loading } from "../../ui";
import { preview } from "../MarkdownTab";
import { cellText, sizeText } from "./types";

// VersionTab is one tab's content at a version, read-only.
export function VersionTab(p: { noteId: string; version: number; tab: string }) {
  const q = useQuery(queries.versionTab(p.noteId, p.version, p.tab));
  const c = q.data;
  const html = useMemo(() => (c?.type === "markdown" ? preview(c.text ?? "") : ""), [c]);
  if (q.isError) return <ErrorBox text={errorText(q.error)} onRetry={() => void q.refetch()} />;
  if (!c) return <Loading what="Opening the tab…" />;
  switch (c.type) {
    case "markdown":
      return (c.text ?? "").trim() === "" ? (
        <p className="muted">The text was empty at this version.</p>
      ) : (
        <div className="md-preview version-md" dangerouslySetInnerHTML={{ __html: html }} />
      );
    case "slides": {
      const slides = c.slides ?? [];
      if (slides.length === 0) return <p className="muted">No slides at this version.</p>;
      return (
        <ol className="plain-list version-list">
          {slides.map((s, i) => (
            <li key={s.slide_id}>
              <strong>
                {i + 1}. {s.title}
              </strong>
              {s.body ? <p className="version-pre">{s.body}</p> : null}
              {s.notes ? <p className="muted version-pre">Notes: {s.notes}</p> : null}
            </li>
          ))}
        </ol>
      );
    }
    case "sheet": {
      const sheets = c.sheets ?? [];
      if (sheets.length === 0) return <p className="muted">No sheets at this version.</p>;
      return (
        <ul className="plain-list version-list">
          {sheets.map((s) => {
            const rows = s.cells ?? [];
            const filled = rows.reduce((n, r) => n + (r ?? []).filter((x) => x !== null && x !== "").length, 0);
            return (
              <li key={s.sheet_id}>
                <strong>{s.name}</strong>
                <span className="muted">
                  {" "}
                  · {rows.length} {rows.length === 1 ? "row" : "rows"}, {filled} filled {filled === 1 ? "cell" : "cells"}
                </span>
                {rows.length ? <SheetPeek rows={rows} /> : null}
              </li>
            );
          })}
        </ul>
      );
    }
    case "sources": {
      const ss = c.sources ?? [];
      if (ss.length === 0) return <p className="muted">No sources at this version.</p>;
      return (
        <ul className="plain-list version-list">
          {ss.map((s) => (
            <li key={s.source_id}>
              <strong>{s.title}</strong> <span className="muted">{s.normalized_url}</span>
            </li>
          ))}
        </ul>
      );
    }
    case "files": {
      const fs = c.files ?? [];
      if (fs.length === 0) return <p className="muted">No files at this version.</p>;
      return (
        <ul className="plain-list version-list">
          {fs.map((f) => (
            <li key={f.file_id}>
              <strong>{f.name}</strong> <span className="muted">· {sizeText(f.size_bytes)}</span>
            </li>
          ))}
        </ul>
      );
    }
  }
  return <p className="muted">A {c.type} tab.</p>;
}

// SheetPeek shows the top-left corner of a sheet.
function SheetPeek({ rows }: { rows: unknown[][] }) {
  const r = rows.slice(0, 8);
  const cols = Math.min(8, Math.max(0, ...r.map((x) => (x ?? []).length)));
  if (cols === 0) return null;
  return (
    <div className="sheet-read version-sheet">
      <table>
        <tbody>
          {r.map((row, i) => (
            <tr key={i}>
              {Array.from({ length: cols }, (_, j) => (
                <td key={j}>{cellText((row ?? [])[j])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

