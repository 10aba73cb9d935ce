import { useState, type FormEvent } from "react";

// MaxName is the longest name the server takes for a Room or an app.
export const MaxName = 200;

// NameForm asks for one name (a Room's, an app's) inside a Dialog: the
// field is focused, Enter submits, the dialog's Escape cancels. A blank or
// too long name is said before anything is sent; error is the server's
// refusal, shown in the same place.
export function NameForm(props: {
  id: string;
  what: string; // "Room", "app": for the messages
  initial?: string;
  submit: string;
  busySubmit: string;
  busy: boolean;
  error?: string;
  onClose: () => void;
  onSave: (name: string) => void;
}) {
  const [name, setName] = useState(props.initial ?? "");
  const [local, setLocal] = useState("");
  const error = local || props.error || "";
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const n = name.trim();
    if (n === "") return setLocal(`Give the ${props.what} a name.`);
    if (n.length > MaxName) return setLocal(`Keep the name to ${MaxName} characters (it has ${n.length}).`);
    props.onSave(n);
  };
  return (
    <form onSubmit={submit} noValidate>
      <label className="field">
        <span>Name</span>
        <input
          id={props.id}
          value={name}
          maxLength={MaxName + 50}
          onChange={(e) => {
            setName(e.target.value);
            setLocal("");
          }}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? props.id + "-error" : undefined}
          autoFocus
        />
      </label>
      {error ? (
        <p className="field-error" id={props.id + "-error"} role="alert">
          {error}
        </p>
      ) : null}
      <div className="dialog-actions">
        <button type="button" className="secondary" onClick={props.onClose} disabled={props.busy}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={props.busy}>
          {props.busy ? props.busySubmit : props.submit}
        </button>
      </div>
    </form>
  );
}
