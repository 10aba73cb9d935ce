import { EditorView, Decoration, WidgetType, type DecorationSet } from "@codemirror/view";
import { StateEffect, StateField, type Extension, type Range } from "@codemirror/state";
import { inkOn, validColor } from "../../live/presence";

// The others' cursors and selections in the markdown editor, each in its
// person's colour with their name over the cursor. The session works out
// where each is in the editor's text (peers' positions are at their
// revision: session.ts maps them) and sets them here; between two
// settings they move with the text as it changes.

// PeerMark is one peer as drawn: [from, to) selected, the cursor at head.
export type PeerMark = { client: string; name: string; color: string; anchor: number; head: number };

export const setPeers = StateEffect.define<DecorationSet>();

const peerField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    for (const e of tr.effects) if (e.is(setPeers)) return e.value;
    return tr.docChanged ? deco.map(tr.changes) : deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

// colorClass names a colour's rule (PeerColors adds it).
export const colorClass = (c: string) => "cm-peer-" + validColor(c).slice(1);

class Caret extends WidgetType {
  constructor(
    readonly client: string,
    readonly name: string,
    readonly color: string,
    readonly below: boolean,
  ) {
    super();
  }
  eq(o: Caret) {
    return o.client === this.client && o.name === this.name && o.color === this.color && o.below === this.below;
  }
  toDOM() {
    const c = document.createElement("span");
    c.className = "cm-remote-caret " + colorClass(this.color) + (this.below ? " cm-remote-below" : "");
    c.dataset.client = this.client;
    c.dataset.name = this.name;
    c.setAttribute("aria-hidden", "true");
    // The name is drawn by CSS (::after, from data-name): the editor's
    // lines hold the text alone.
    c.title = this.name;
    return c;
  }
  ignoreEvent() {
    return true;
  }
}

// peerDecorations draws marks over a text of length len.
export function peerDecorations(marks: PeerMark[], len: number, lineOf: (pos: number) => number): DecorationSet {
  const out: Range<Decoration>[] = [];
  for (const m of marks) {
    const a = Math.max(0, Math.min(len, m.anchor));
    const h = Math.max(0, Math.min(len, m.head));
    const from = Math.min(a, h);
    const to = Math.max(a, h);
    if (from < to) out.push(Decoration.mark({ class: "cm-remote-sel " + colorClass(m.color), attributes: { "data-client": m.client } }).range(from, to));
    out.push(Decoration.widget({ widget: new Caret(m.client, m.name, m.color, lineOf(h) === 1), side: 1 }).range(h));
  }
  return Decoration.set(out, true);
}

// PeerColors holds the CSS rule of each peer colour in the editor's shadow
// root: a constructed style sheet, which the page's policy (no inline
// styles) allows.
export class PeerColors {
  private sheet: CSSStyleSheet | null = null;
  private have = new Set<string>();

  attach(root: ShadowRoot) {
    try {
      this.sheet = new CSSStyleSheet();
      root.adoptedStyleSheets = [...root.adoptedStyleSheets, this.sheet];
      this.have.clear();
    } catch {
      this.sheet = null; // no constructed sheets: the theme's grey
    }
  }

  add(color: string) {
    const c = validColor(color);
    if (!this.sheet || this.have.has(c)) return;
    this.have.add(c);
    this.sheet.insertRule(`.${colorClass(c)} { --peer: ${c}; --peer-ink: ${inkOn(c)}; }`, this.sheet.cssRules.length);
  }
}

export const peersTheme = EditorView.theme({
  ".cm-remote-sel": { backgroundColor: "color-mix(in srgb, var(--peer, #6b7280) 30%, transparent)" },
  ".cm-remote-caret": {
    position: "relative",
    display: "inline-block",
    width: "0",
    height: "1.3em",
    verticalAlign: "text-bottom",
    borderLeft: "2px solid var(--peer, #6b7280)",
    marginLeft: "-1px",
    marginRight: "-1px",
    pointerEvents: "none",
  },
  ".cm-remote-caret::after": {
    content: "attr(data-name)",
    position: "absolute",
    bottom: "100%",
    left: "-2px",
    whiteSpace: "nowrap",
    fontFamily: "system-ui, sans-serif",
    fontSize: ".7rem",
    lineHeight: "1.25",
    padding: "0 .35em",
    borderRadius: "3px 3px 3px 0",
    backgroundColor: "var(--peer, #6b7280)",
    color: "var(--peer-ink, #fff)",
    zIndex: "5",
    userSelect: "none",
  },
  ".cm-remote-below::after": { bottom: "auto", top: "100%", borderRadius: "0 3px 3px 3px" },
});

export const peers: Extension = [peerField, peersTheme];
