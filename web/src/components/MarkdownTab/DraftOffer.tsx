import type { Draft } from "./draft";

// DraftOffer offers the person's unsaved text from before (a reload, a
// closed window) to restore or discard.
export function DraftOffer({ draft, onRestore, onDiscard }: { draft: Draft; onRestore: () => void; onDiscard: () => void }) {
  return (
    <div className="draft-offer notice" role="region" aria-label="Unsaved text">
      <div>
        <p>
          <strong>You have unsaved text from {draft.at ? new Date(draft.at).toLocaleString() : "earlier"}</strong>: it was not saved to the Note.
          Restore it to keep working on it, or discard it.
        </p>
        <pre className="draft-text">{draft.text}</pre>
      </div>
      <div className="draft-actions">
        <button type="button" className="primary" onClick={onRestore} data-restore="">
          Restore
        </button>
        <button type="button" className="secondary" onClick={onDiscard}>
          Discard
        </button>
      </div>
    </div>
  );
}
