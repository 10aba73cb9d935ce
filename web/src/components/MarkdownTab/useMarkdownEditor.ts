import { useEffect, useMemo, useState, type RefObject } from "react";
import type { SaveState } from "../../save";
import type { Draft } from "./draft";
import { merge3 } from "./merge";
import { preview } from "./preview";
import { MarkdownSession } from "./session";
import type { MarkdownProps, TextConflict } from "./types";

// useMarkdownEditor is a markdown tab's editor: its session (made once per
// tab), the editor mounted in host, the page's live changes and the
// others' presence handed to it, and what the view shows.
export function useMarkdownEditor(p: MarkdownProps, restored: Draft | null, host: RefObject<HTMLDivElement | null>) {
  const [text, setText] = useState(restored ? restored.text : p.text);
  const [conflict, setConflict] = useState<TextConflict | null>(null);
  const [error, setError] = useState("");
  const [state, setState] = useState<SaveState>("saved");
  const [session] = useState(() => new MarkdownSession(p, restored, { text: setText, conflict: setConflict, error: setError, state: setState }));
  useEffect(() => {
    session.update(p);
  });
  useEffect(() => {
    const el = host.current;
    return el ? session.mount(el) : undefined;
  }, [session, host]);
  const { remote } = p;
  useEffect(() => {
    if (remote) session.heard(remote);
  }, [session, remote]);
  // The line the address points at (once the editor is mounted, above).
  const line = p.target?.line;
  const key = p.target?.key;
  useEffect(() => {
    if (line !== undefined) session.reveal(line);
  }, [session, line, key]);

  const html = useMemo(() => preview(text), [text]);
  const merged = useMemo(() => (conflict ? merge3(conflict.base, conflict.theirs, text) : null), [conflict, text]);
  return { session, text, conflict, merged, error, state, html };
}
