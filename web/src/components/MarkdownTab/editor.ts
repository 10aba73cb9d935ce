import { EditorView } from "codemirror";

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
