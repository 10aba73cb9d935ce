import type { SearchHit } from "../../api";
import { noteHref } from "../target";

// What the search palette makes of what the person types and of what the
// server answers: the query sent, the snippet's marks, where a hit is, its
// address, and the hits grouped by Note.

// MaxQuery is the server's rule for a query, in characters.
export const MaxQuery = 200;

// typingQuery is the query sent for what the person has typed so far:
// trimmed, and with its last word a prefix (word*), so that results come
// as they type. It stays as typed when it ends in a space or a quote (a
// finished word, a closed phrase), inside an open phrase, when the last
// word is shorter than 2 characters or does not end in a letter or digit,
// or when the star would make it too long.
export function typingQuery(text: string): string {
  const q = text.trim();
  if (q === "" || /[\s"]$/.test(text)) return q;
  if ((q.match(/"/g) ?? []).length % 2 === 1) return q;
  const last = q.split(/\s+/).pop() ?? "";
  if ([...last].length < 2 || !/[\p{L}\p{N}]$/u.test(last) || [...q].length >= MaxQuery) return q;
  return q + "*";
}

// A Piece of a snippet: text, marked (a matched word) or not.
export type Piece = { text: string; mark: boolean };

// snippetPieces reads a snippet, whose matched words the server wraps in
// « and »: a marker without its other half is text.
export function snippetPieces(snippet: string): Piece[] {
  const out: Piece[] = [];
  const re = /«([^«»]*)»/g;
  let at = 0;
  for (let m = re.exec(snippet); m !== null; m = re.exec(snippet)) {
    if (m.index > at) out.push({ text: snippet.slice(at, m.index), mark: false });
    if (m[1] !== "") out.push({ text: m[1], mark: true });
    at = m.index + m[0].length;
  }
  if (at < snippet.length) out.push({ text: snippet.slice(at), mark: false });
  return out;
}

// typeWord is a tab type as the results name it.
export function typeWord(hit: Pick<SearchHit, "tab_type" | "where">): string {
  if (hit.where.field === "title") return "Title";
  switch (hit.tab_type) {
    case "markdown":
      return "Text";
    case "slides":
      return "Slides";
    case "sheet":
      return "Sheet";
    case "sources":
      return "Sources";
    case "files":
      return "Files";
  }
  return String(hit.tab_type);
}

// whereText is where in its tab a hit is: "line 12", "slide 3", "B7".
export function whereText(hit: Pick<SearchHit, "where">): string {
  const w = hit.where;
  const slide = w.slide_index !== undefined ? `slide ${w.slide_index + 1}` : "a slide";
  switch (w.field) {
    case "title":
      return "the Note's title";
    case "text":
      return w.line ? `line ${w.line}` : "";
    case "slide_title":
      return slide + ", title";
    case "slide_body":
      return slide;
    case "slide_notes":
      return slide + ", speaker notes";
    case "cell":
      return w.cell ?? "";
    case "source":
      return "a source";
    case "file":
      return "a file";
  }
  return "";
}

// hitHref is the address that opens a hit's Note at its tab and place.
export function hitHref(hit: Pick<SearchHit, "note_id" | "tab_id" | "where">): string {
  const w = hit.where;
  switch (w.field) {
    case "text":
      return noteHref(hit.note_id, hit.tab_id, { line: w.line });
    case "slide_title":
    case "slide_body":
    case "slide_notes":
      return noteHref(hit.note_id, hit.tab_id, { slide: w.slide_id });
    case "cell":
      return noteHref(hit.note_id, hit.tab_id, { sheet: w.sheet_id, cell: w.cell });
  }
  return noteHref(hit.note_id, hit.tab_id);
}

// A Group is one Note's hits, in the order the server gave them.
export type Group = { noteId: string; title: string; hits: SearchHit[] };

// grouped puts the hits under their Notes, each Note where its first hit
// came (the server orders title hits first, then the Notes changed most
// recently).
export function grouped(hits: SearchHit[]): Group[] {
  const out: Group[] = [];
  const by = new Map<string, Group>();
  for (const h of hits) {
    let g = by.get(h.note_id);
    if (!g) {
      g = { noteId: h.note_id, title: h.title, hits: [] };
      by.set(h.note_id, g);
      out.push(g);
    }
    g.hits.push(h);
  }
  return out;
}
