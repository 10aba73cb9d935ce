import type { Gone, Writer } from "./types";
import "./live.css";

// LiveMarker says who is writing to the Note, while they are (the latest
// writer when several write). Its place in the header is kept when it is
// empty, so the header does not move when it appears.
export function LiveMarker({ writer }: { writer: Writer | null }) {
  return (
    <span className={"live-marker" + (writer ? " is-on" : "")} role="status" aria-live="polite" aria-atomic="true" id="live-marker">
      {writer ? (
        <span className="live-pill" title={`${writer.name} is writing`}>
          <span className="live-dot" aria-hidden="true" />
          <span className="live-text">{`${writer.name} is writing…`}</span>
        </span>
      ) : null}
    </span>
  );
}

// LiveGone says the Note can no longer be followed, and why.
export function LiveGone({ gone }: { gone: Gone | null }) {
  if (!gone) return null;
  return (
    <div className="live-gone notice" role="alert">
      <p>
        <strong>{gone.reason}</strong>
        {gone.deleted ? " Nothing typed here can be saved any more: copy out anything you need, or restore the Note from the Trash." : null}
      </p>
      <a href="/" className="secondary button">
        Back to Notes
      </a>
      {gone.deleted ? (
        <a href="/trash" className="secondary button">
          Open the Trash
        </a>
      ) : null}
    </div>
  );
}
