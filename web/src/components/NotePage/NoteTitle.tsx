import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { api, ApiError, errorText, keys, queryClient } from "../../api";

// MaxTitle is the server's rule for a title, in characters (maxLength
// counts UTF-16 units, so the field holds twice as many and the server's
// refusal of more says why).
const MaxTitle = 200;

// NoteTitle is the Note's heading, and its title field while renaming: the
// field opens focused with the title selected (empty, with the title as
// its placeholder, for a Note just made, so typing names it); Enter or
// leaving the field saves, Escape keeps the title as it was.
type TitleProps = {
  id: string;
  title: string;
  version: number;
  editing: "" | "rename" | "new";
  onDone: () => void;
  onVersion: (v: number) => void;
  onFailed: (text: string) => void;
};

export function NoteTitle(props: TitleProps) {
  if (!props.editing) return <h1 id="note-title">{props.title}</h1>;
  return <TitleField key={props.editing} {...props} />;
}

// TitleField is made anew each time the field opens, so it starts from
// the title as it is then.
function TitleField(props: TitleProps) {
  const { editing } = props;
  const [value, setValue] = useState(editing === "new" ? "" : props.title);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const done = useRef(false);

  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);

  const save = (e?: FormEvent) => {
    e?.preventDefault();
    if (done.current || busy) return;
    const t = value.trim();
    if (t === "" && editing === "rename") {
      setError("A Note needs a title: type one, or press Escape to keep the old one.");
      return;
    }
    if (t === "" || t === props.title) {
      done.current = true;
      props.onDone();
      return;
    }
    setBusy(true);
    api
      .patchNote({ id: props.id, version: props.version }, { title: t })
      .then((res) => {
        done.current = true;
        props.onVersion(res.version);
        queryClient.setQueryData(keys.note(props.id), (d: { title: string; version: number } | undefined) => (d ? { ...d, title: res.title, version: res.version } : d));
        void queryClient.invalidateQueries({ queryKey: keys.note(props.id), exact: true });
        void queryClient.invalidateQueries({ queryKey: keys.allNotes });
        props.onDone();
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.field === "title") {
          setError(err.message);
          return;
        }
        done.current = true;
        props.onDone();
        props.onFailed(errorText(err));
      })
      .finally(() => setBusy(false));
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "Escape") {
      e.preventDefault();
      done.current = true;
      props.onDone();
    }
  };

  return (
    <h1 id="note-title" className="note-title-edit">
      <form onSubmit={save} noValidate>
        <label className="sr-only" htmlFor="note-title-input">
          Note title
        </label>
        <input
          id="note-title-input"
          ref={input}
          value={value}
          placeholder={props.title}
          maxLength={2 * MaxTitle}
          onChange={(e) => {
            setValue(e.target.value);
            setError("");
          }}
          onKeyDown={onKey}
          onBlur={() => save()}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? "note-title-error" : undefined}
          disabled={busy}
        />
        {error ? (
          <span className="field-error" id="note-title-error" role="alert">
            {error}
          </span>
        ) : null}
      </form>
    </h1>
  );
}
