import { changedLines, type Merged } from "./merge";
import type { TextConflict } from "./types";

// ConflictPanel is a save refused because someone wrote this tab in
// between: what they changed, and the ways to go on — both (when the two
// touch different lines), theirs, or mine; side by side when both changed
// the same lines.
export function ConflictPanel(p: { conflict: TextConflict; merged: Merged; text: string; mine: () => string; settle: (t: string) => void }) {
  const { conflict, merged, settle } = p;
  return (
    <section className="conflict" aria-labelledby="conflict-title" role="region">
      <h2 id="conflict-title">{conflict.who} changed this tab while you were writing</h2>
      <details className="their-change" open>
        <summary>What {conflict.who} changed</summary>
        <pre tabIndex={0} aria-label={"What " + conflict.who + " changed"}>
          {changedLines(conflict.base, conflict.theirs).join("\n") || "Nothing in this tab's text."}
        </pre>
      </details>
      {merged.clean ? (
        <>
          <p>
            Your text is kept here and was not saved yet. Your changes and theirs touch different lines: apply both to keep everything,
            then it is saved on version {conflict.version}.
          </p>
          <div className="conflict-actions">
            <button type="button" className="primary" onClick={() => settle(merged.text)}>
              Apply both
            </button>
            <button type="button" className="secondary" onClick={() => settle(conflict.theirs)}>
              Take theirs
            </button>
            <button type="button" className="secondary" onClick={() => settle(p.mine())}>
              Keep mine
            </button>
          </div>
        </>
      ) : (
        <>
          <p>
            Your text is kept here and was not saved yet. You both changed the same lines: choose what to keep, or edit both into one.
          </p>
          <div className="side-by-side">
            <div>
              <h3>Theirs (version {conflict.version})</h3>
              <pre className="theirs" tabIndex={0} aria-label="Their text">
                {conflict.theirs}
              </pre>
            </div>
            <div>
              <h3>Yours</h3>
              <pre className="mine" tabIndex={0} aria-label="Your text">
                {p.text}
              </pre>
            </div>
          </div>
          <div className="conflict-actions">
            <button type="button" className="primary" onClick={() => settle(p.mine())}>
              Keep mine
            </button>
            <button type="button" className="secondary" onClick={() => settle(conflict.theirs)}>
              Take theirs
            </button>
            <button type="button" className="secondary" onClick={() => settle(merged.text)}>
              Edit both
            </button>
          </div>
        </>
      )}
    </section>
  );
}
