import { useEffect, useRef, useState, type FormEvent } from "react";
import type { TabRef } from "../../api";
import { MaxLabel } from "./types";

// RenameTab is a tab's label being edited in place: Enter saves (trimmed),
// Escape cancels; an empty label is refused here, before the server would.
export function RenameTab(props: { tab: TabRef; onCancel: () => void; onSave: (label: string) => Promise<boolean> }) {
  const [label, setLabel] = useState(props.tab.label);
  const [err, setErr] = useState("");
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLInputElement>(null);
  const done = useRef(false);
  useEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    if (done.current) return;
    const v = label.trim();
    if (v === "") {
      setErr("A tab needs a name: type one, or press Escape to keep “" + props.tab.label + "”.");
      ref.current?.focus();
      return;
    }
    if (v === props.tab.label) {
      done.current = true;
      props.onCancel();
      return;
    }
    setBusy(true);
    done.current = true;
    void props.onSave(v).then((ok) => {
      setBusy(false);
      if (!ok) {
        done.current = false;
        ref.current?.focus();
      }
    });
  };
  const errId = "rename-tab-error";
  return (
    <form className="tab-rename" onSubmit={submit}>
      <input
        ref={ref}
        id="rename-tab-input"
        value={label}
        maxLength={2 * MaxLabel}
        disabled={busy}
        aria-label={`New name for the tab “${props.tab.label}”`}
        aria-invalid={err !== ""}
        aria-describedby={err ? errId : undefined}
        onChange={(e) => {
          setLabel(e.target.value);
          setErr("");
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            done.current = true;
            props.onCancel();
          }
        }}
        onBlur={() => {
          if (!busy && !err) submit();
        }}
      />
      {err ? (
        <span className="tab-rename-error" id={errId} role="alert">
          {err}
        </span>
      ) : null}
    </form>
  );
}
