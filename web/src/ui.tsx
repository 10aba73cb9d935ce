import { useEffect, useRef, type ReactNode } from "react";

// Dialog is a modal <dialog>: the browser keeps focus inside it and
// closes it on Escape.
export function Dialog(props: { open: boolean; title: string; onClose: () => void; children: ReactNode; id: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={props.id + "-title"}
      onClose={() => {
        // The close event comes a task after close(): by then the dialog
        // may be open again, which this stale event must not undo.
        if (ref.current && !ref.current.open && props.open) props.onClose();
      }}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <h2 id={props.id + "-title"}>{props.title}</h2>
      {props.open ? props.children : null}
    </dialog>
  );
}

export function ErrorBox(props: { text: string; onRetry?: () => void }) {
  return (
    <div className="error-box" role="alert">
      <p>{props.text}</p>
      {props.onRetry ? (
        <button type="button" className="secondary" onClick={props.onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Loading(props: { what: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {props.what}
    </div>
  );
}

// when is a time as people read it: "just now", "5 min ago", a date.
export function when(iso: string | undefined, now = Date.now()): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const s = Math.round((now - t) / 1000);
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  const d = new Date(t);
  return d.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

// Notice is a message the person can dismiss (nothing when text is
// empty). role is "alert" for what went wrong, "status" for what is done.
// A Notice may offer one action beside Dismiss (Undo).
export function Notice(props: { text: string; onDismiss: () => void; role?: "alert" | "status"; className?: string; action?: { text: string; run: () => void } }) {
  if (!props.text) return null;
  return (
    <div className={"notice" + (props.className ? " " + props.className : "")} role={props.role ?? "status"}>
      <p>{props.text}</p>
      {props.action ? (
        <button type="button" className="secondary small" onClick={props.action.run}>
          {props.action.text}
        </button>
      ) : null}
      <button type="button" className="ghost small" onClick={props.onDismiss} aria-label="Dismiss this message">
        Dismiss
      </button>
    </div>
  );
}

// Confirm is a dialog that asks before an act that cannot be undone.
export function Confirm(props: { id: string; open: boolean; title: string; act: string; acting: string; busy: boolean; onCancel: () => void; onConfirm: () => void; children: ReactNode }) {
  return (
    <Dialog id={props.id} open={props.open} title={props.title} onClose={() => (props.busy ? undefined : props.onCancel())}>
      <p>{props.children}</p>
      <div className="dialog-actions">
        <button type="button" className="secondary" onClick={props.onCancel} disabled={props.busy} autoFocus>
          Cancel
        </button>
        <button type="button" className="danger" onClick={props.onConfirm} disabled={props.busy}>
          {props.busy ? props.acting : props.act}
        </button>
      </div>
    </Dialog>
  );
}
