import { EditorView } from "codemirror";
import { StateEffect, StateField, type Extension } from "@codemirror/state";

// theme is the editor's look in the app's palette (its custom properties
// reach into the shadow root).
export const theme = EditorView.theme({
  "&": { minHeight: "24rem", height: "100%", color: "var(--fg)", backgroundColor: "var(--card)", borderRadius: "var(--radius)", fontSize: ".95rem" },
  "&.cm-focused": { outline: "3px solid var(--focus)", outlineOffset: "0" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", lineHeight: "1.55" },
  ".cm-content": { caretColor: "var(--fg)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--fg)" },
  ".cm-gutters": { backgroundColor: "var(--soft)", color: "var(--muted)", borderRight: "1px solid var(--line)", borderRadius: "var(--radius) 0 0 var(--radius)" },
  ".cm-activeLine": { backgroundColor: "color-mix(in srgb, var(--note-bg) 55%, transparent)" },
  ".cm-activeLineGutter": { backgroundColor: "color-mix(in srgb, var(--note-bg) 80%, transparent)", color: "var(--fg)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": { backgroundColor: "color-mix(in srgb, var(--accent) 30%, transparent)" },
});

// An anchor is a place in the text and where it is on screen.
export type Anchor = { pos: number; top: number };

// viewAnchor is the first line of the editor in view (null: none is).
export function viewAnchor(v: EditorView): Anchor | null {
  const r = v.scrollDOM.getBoundingClientRect();
  const y = Math.max(r.top, 0) + 1;
  if (y >= Math.min(r.bottom, window.innerHeight)) return null;
  const pos = v.lineBlockAtHeight(y - v.documentTop).from;
  const c = v.coordsAtPos(pos);
  return c ? { pos, top: c.top } : null;
}

// keepInView scrolls the page so that a.pos is where a.top was: lines an
// editor above what the person reads does not push it away. (The
// editor's own scroller keeps its place by itself; the page's does not.)
export function keepInView(v: EditorView, a: Anchor) {
  const fix = (top: number | null | undefined) => {
    if (top != null && Math.abs(top - a.top) > 0.5) window.scrollBy(0, top - a.top);
  };
  fix(v.coordsAtPos(a.pos)?.top);
  // Once the editor has measured its new lines, again.
  v.requestMeasure({ read: (view) => view.coordsAtPos(a.pos)?.top, write: fix });
}

// A list marker at the start of a line: "- ", "* ", "+ ", "1. ", "1) ",
// each maybe with a task box "[ ] ".
const markerAt = /^(\s*(?:>\s*)*)((?:[-*+]|\d{1,9}[.)]) (?:\[[ xX]\] )?)$/;
const typedMarker = /^(?:[-*+]|\d{1,9}[.)]) $/;

// autoMarker is the list marker Enter just continued, while the cursor
// stays on its line: [from, to) of the marker, without its indentation.
type Auto = { from: number; to: number } | null;
const setAuto = StateEffect.define<Auto>();
const autoMarker = StateField.define<Auto>({
  create: () => null,
  update(v, tr) {
    for (const e of tr.effects) if (e.is(setAuto)) return e.value;
    const doc = tr.newDoc;
    const sel = tr.newSelection.main;
    // Enter (typed, not pasted) that left the cursor after a bare marker.
    if (tr.docChanged && tr.isUserEvent("input") && !tr.isUserEvent("input.paste")) {
      let newline = false;
      tr.changes.iterChanges((_a, _b, _c, _d, text) => {
        if (text.lines > 1) newline = true;
      });
      if (newline) {
        const line = doc.lineAt(sel.head);
        const m = sel.empty && sel.head === line.to ? markerAt.exec(line.text) : null;
        return m ? { from: line.from + m[1].length, to: line.to } : null;
      }
    }
    if (!v) return v;
    const from = tr.changes.mapPos(v.from, 1);
    const to = tr.changes.mapPos(v.to, -1);
    if (to - from !== v.to - v.from || doc.lineAt(sel.head).number !== doc.lineAt(from).number || sel.head < to) return null;
    return { from, to };
  },
});

// listContinuation keeps a continued list from doubling its marker: after
// Enter on "- item" has put "- " on the new line, a person who types "- "
// (or "* ", "1. ", "- [ ] " begun with "- ") themselves gets their marker
// in its place, not "- - ".
export const listContinuation: Extension = [
  autoMarker,
  EditorView.inputHandler.of((view, from, to, text) => {
    const a = view.state.field(autoMarker, false);
    if (!a || from !== to || from < a.to) return false;
    const typed = view.state.sliceDoc(a.to, from) + text;
    const after = view.state.doc.lineAt(from);
    if (!typedMarker.test(typed) || after.to !== from) return false;
    view.dispatch({ changes: { from: a.from, to, insert: typed }, selection: { anchor: a.from + typed.length }, effects: setAuto.of(null), userEvent: "input.type" });
    return true;
  }),
];
