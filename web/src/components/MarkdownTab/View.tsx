import { useEffect, useRef, useState } from "react";
import { ConflictPanel } from "./ConflictPanel";
import { DraftOffer } from "./DraftOffer";
import { clearDraft, loadDraft, type Draft } from "./draft";
import { useMarkdownEditor } from "./useMarkdownEditor";
import type { MarkdownProps } from "./types";

// The markdown tab: CodeMirror beside a sanitized preview (see session.ts
// for how it is edited live with the others). Unsaved text from before
// is offered first.
export function MarkdownTab(p: MarkdownProps) {
  const [offer, setOffer] = useState<Draft | null>(() => {
    const d = loadDraft(p.noteId, p.tabId);
    if (d && d.text === p.text) {
      clearDraft(p.noteId, p.tabId);
      return null;
    }
    return d;
  });
  // A draft not restored yet is text the server does not have.
  const { onState } = p;
  useEffect(() => {
    if (offer) onState("unsaved");
  }, [offer, onState]);
  if (offer) {
    return (
      <DraftOffer
        draft={offer}
        onRestore={() => setOffer(null)}
        onDiscard={() => {
          clearDraft(p.noteId, p.tabId);
          setOffer(null);
          p.onState("saved");
        }}
      />
    );
  }
  return <Editor {...p} />;
}

function Editor(p: MarkdownProps) {
  const [restored] = useState(() => loadDraft(p.noteId, p.tabId));
  const host = useRef<HTMLDivElement>(null);
  const ed = useMarkdownEditor(p, restored, host);
  return (
    <div className="md-tab">
      {ed.conflict && ed.merged ? (
        <ConflictPanel conflict={ed.conflict} merged={ed.merged} text={ed.text} mine={() => ed.session.doc()} settle={(t) => ed.session.settle(t)} />
      ) : null}
      {ed.error ? (
        <div className="error-box" role="alert">
          <p>Not saved: {ed.error}</p>
          <button type="button" className="secondary" onClick={ed.session.retry}>
            Try again
          </button>
        </div>
      ) : null}
      <div className="md-split">
        <div className="md-editor" ref={host} data-state={ed.state} />
        <div className="md-preview" aria-label="Preview" role="region" tabIndex={0} dangerouslySetInnerHTML={{ __html: ed.html }} />
      </div>
    </div>
  );
}
