import { useRef, useState, type ReactNode } from "react";
import { errorText } from "../../api";
import { ErrorBox, Loading, Notice } from "../../ui";

// CopyField is a value shown read-only with a Copy button: a one-time
// link, a token's secret, an address. If the clipboard cannot be written
// the value is selected, for the person to copy it themselves.
export function CopyField(props: { id: string; label: string; value: string; mono?: boolean }) {
  const ref = useRef<HTMLInputElement>(null);
  const [said, setSaid] = useState("");
  const copy = () => {
    const el = ref.current;
    if (!el) return;
    el.focus();
    el.select();
    const fallback = () => {
      // The older command works where the clipboard API is refused.
      setSaid(document.execCommand("copy") ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy.");
    };
    if (navigator.clipboard?.writeText) {
      navigator.clipboard.writeText(props.value).then(() => setSaid("Copied."), fallback);
    } else {
      fallback();
    }
  };
  return (
    <div className="copy-field">
      <label className="field" htmlFor={props.id}>
        <span>{props.label}</span>
      </label>
      <div className="copy-row">
        <input id={props.id} ref={ref} readOnly value={props.value} className={props.mono ? "mono" : undefined} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" className="secondary" onClick={copy} aria-describedby={props.id + "-said"}>
          Copy
        </button>
      </div>
      <p id={props.id + "-said"} className="copy-said" role="status" aria-live="polite">
        {said}
      </p>
    </div>
  );
}

// ShownOnce is what the server answers once and never again (an
// invitation's link, a token's secret): the value to copy, and Done.
export function ShownOnce(props: { id: string; title: string; label: string; value: string; onDone: () => void; children: ReactNode }) {
  return (
    <div className="once" role="region" aria-labelledby={props.id + "-title"}>
      <h3 id={props.id + "-title"}>{props.title}</h3>
      <p>{props.children}</p>
      <CopyField id={props.id} label={props.label} value={props.value} mono />
      <button type="button" className="secondary small" onClick={props.onDone}>
        Done
      </button>
    </div>
  );
}

// useMessages is a part's two messages: what is done, what went wrong.
export function useMessages() {
  const [notice, say] = useState("");
  const [failure, fail] = useState("");
  const view = (
    <>
      <Notice text={notice} onDismiss={() => say("")} role="status" />
      <Notice text={failure} onDismiss={() => fail("")} role="alert" />
    </>
  );
  return { say, fail, view };
}

// Reading is a list's state while it is not there: its error, with Try
// again, or that it loads.
export function Reading(props: { error: unknown; isError: boolean; loaded: boolean; what: string; retry: () => void }) {
  if (props.isError) return <ErrorBox text={errorText(props.error)} onRetry={props.retry} />;
  return props.loaded ? null : <Loading what={props.what} />;
}

// Confirm is shared with the other pages (ui.tsx).
export { Confirm } from "../../ui";

// FormError is why a form's act was refused.
export function FormError({ text }: { text: string }) {
  return text ? (
    <p className="field-error" role="alert">
      {text}
    </p>
  ) : null;
}
