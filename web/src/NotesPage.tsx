import { useEffect, useId, useLayoutEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { keepPreviousData, useInfiniteQuery, type InfiniteData } from "@tanstack/react-query";
import { api, ApiError, errorText, keys, queries, queryClient, type Note, type NotesList, type Written } from "./api";
import { writers } from "./save";
import { Link, navigate } from "./router";
import { Dialog, ErrorBox, Loading, when, Notice } from "./ui";

// MaxTitle bounds a title typed here, in characters; the server checks its
// own rule too. maxLength counts UTF-16 units (an emoji is two), so a title
// field holds twice as many and the server's refusal of more says why.
const MaxTitle = 200;

// trashed is the Note the Note page just moved to the trash, for the list
// it goes back to to offer Undo.
export const trashed: { current: { id: string; title: string; version: number } | null } = { current: null };

// NewTitle is the title a new Note starts with, until it is named on its
// page (its title field opens empty, this as its placeholder).
const NewTitle = "Untitled";

type State = { kind: "loading" } | { kind: "error"; text: string } | { kind: "ready"; notes: Note[]; next: string };

export function NotesPage({ me }: { me: string }) {
  const [query, setQuery] = useState("");
  const [debounced, setDebounced] = useState("");
  const [notice, setNotice] = useState("");
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Note | null>(null);
  // undo is the Note last moved to the trash from here or from its page.
  const [undo, setUndo] = useState(() => {
    const t = trashed.current;
    trashed.current = null;
    return t;
  });

  // New Note makes the Note and opens it, its title field focused.
  const create = () => {
    setCreating(true);
    setNotice("");
    api
      .createNote(NewTitle)
      .then((n) => {
        void queryClient.invalidateQueries({ queryKey: keys.allNotes });
        navigate("/notes/" + encodeURIComponent(n.id) + "?title=new");
      })
      .catch((e: unknown) => {
        setCreating(false);
        setNotice(errorText(e));
      });
  };
  const restore = () => {
    const t = undo;
    if (!t) return;
    setUndo(null);
    api
      .untrashNote(t)
      .then(() => {
        setNotice("");
        refresh();
        void queryClient.invalidateQueries({ queryKey: keys.trash });
      })
      .catch((e: unknown) => setNotice(errorText(e)));
  };

  useEffect(() => {
    const t = setTimeout(() => setDebounced(query.trim()), 250);
    return () => clearTimeout(t);
  }, [query]);

  // The list, a page of 50 at a time; while a new search is read the
  // list as it was stays.
  const q = useInfiniteQuery({ ...queries.notes(debounced), placeholderData: keepPreviousData });
  const state: State = q.data
    ? { kind: "ready", notes: q.data.pages.flatMap((p) => p.notes ?? []), next: q.data.pages[q.data.pages.length - 1]?.next_cursor ?? "" }
    : q.isError
      ? { kind: "error", text: errorText(q.error) }
      : { kind: "loading" };
  const more = q.isFetchingNextPage;
  const refresh = () => void q.refetch();
  // edit changes the list as this page changed it.
  const edit = (f: (notes: Note[]) => Note[]) =>
    queryClient.setQueryData<InfiniteData<NotesList>>(keys.notes(debounced), (d) => {
      if (!d) return d;
      const all = f(d.pages.flatMap((p) => p.notes ?? []));
      // The pages keep their cursors; the notes are laid over them anew.
      let at = 0;
      return { ...d, pages: d.pages.map((p, i) => ({ ...p, notes: i === d.pages.length - 1 ? all.slice(at) : all.slice(at, (at += (p.notes ?? []).length)) })) };
    });

  // "/" jumps to the search box from anywhere on the page but a field.
  const search = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey || document.querySelector("dialog[open]")) return;
      if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
      e.preventDefault();
      search.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  // After "Show more Notes", the first Note the page brought takes the
  // focus, if the focus went nowhere meanwhile (the button is disabled
  // while the page is read, and gone after the last page): a keyboard or a
  // screen reader carries on from the Notes it asked for.
  const firstNew = useRef(-1);
  const listRef = useRef<HTMLUListElement>(null);
  const shown = state.kind === "ready" ? state.notes.length : 0;
  useEffect(() => {
    firstNew.current = -1; // a new search is a new list
  }, [debounced]);
  useLayoutEffect(() => {
    const at = firstNew.current;
    if (at < 0 || shown <= at) return;
    firstNew.current = -1;
    const active = document.activeElement;
    if (active && active !== document.body && !active.classList.contains("more")) return;
    listRef.current?.querySelectorAll<HTMLElement>(".note-title")[at]?.focus();
  }, [shown]);

  const loadMore = () => {
    if (state.kind !== "ready" || !state.next) return;
    firstNew.current = state.notes.length;
    void q.fetchNextPage().then((r) => {
      if (r.isError) {
        firstNew.current = -1;
        setNotice(errorText(r.error));
      }
    });
  };

  const replace = (n: Note) => edit((notes) => notes.map((x) => (x.id === n.id ? { ...x, ...n } : x)));

  // failed shows why a change was refused; a Note that changed meanwhile
  // (412) or is gone (404) is read again.
  const failed = (e: unknown, n?: Note) => {
    const text = e instanceof Error ? e.message : String(e);
    if (e instanceof ApiError && e.status === 412) {
      const by = writers(e.changes, me);
      const what = n ? `“${n.title}”` : "This Note";
      setNotice(
        `${what} was changed${by ? " by " + by : ""} since the list was loaded, so your change was not made. The list now shows it as it is: make the change again if you still want it.`,
      );
      refresh();
      return;
    }
    if (e instanceof ApiError && e.status === 404) refresh();
    setNotice(text);
  };

  const searching = debounced !== "";
  return (
    <section className="page" aria-labelledby="notes-title">
      <div className="page-head">
        <h1 id="notes-title">Notes</h1>
        <div className="page-actions">
          <Link to="/trash" className="button secondary">
            Trash
          </Link>
          <button type="button" className="primary" id="new-note" onClick={create} disabled={creating}>
            {creating ? "Creating…" : "New Note"}
          </button>
        </div>
      </div>
      <div className="toolbar">
        <label className="search">
          <span className="sr-only">Search Notes</span>
          <input
            ref={search}
            type="search"
            placeholder="Search Notes  ( / )"
            aria-keyshortcuts="/"
            value={query}
            maxLength={MaxTitle}
            onChange={(e) => setQuery(e.target.value)}
            aria-controls={state.kind === "ready" && state.notes.length > 0 ? "notes-list" : undefined}
          />
        </label>
      </div>
      <Notice text={notice} onDismiss={() => setNotice("")} role="alert" />
      <Notice
        text={undo ? `Moved “${undo.title}” to the trash. It stays there 30 days.` : ""}
        onDismiss={() => setUndo(null)}
        action={undo ? { text: "Undo", run: restore } : undefined}
        className="undo"
      />
      {state.kind === "loading" ? <Loading what="Loading Notes…" /> : null}
      {state.kind === "error" ? <ErrorBox text={state.text} onRetry={refresh} /> : null}
      {state.kind === "ready" && state.notes.length === 0 ? (
        searching ? (
          <div className="empty">
            <p>No Notes match “{debounced}”.</p>
            <button type="button" className="secondary" onClick={() => setQuery("")}>
              Clear the search
            </button>
          </div>
        ) : (
          <div className="empty">
            <h2>No Notes yet — create one</h2>
            <p>A Note holds markdown, slides, sheets, sources and files, for you and the agents you connect.</p>
            <button type="button" className="primary" onClick={create} disabled={creating}>
              Create a Note
            </button>
          </div>
        )
      ) : null}
      {state.kind === "ready" && state.notes.length > 0 ? (
        <>
          <ul ref={listRef} className="notes" id="notes-list" aria-label={searching ? `Notes matching ${debounced}` : "Notes"}>
            {state.notes.map((n) => (
              <NoteRow key={n.id} note={n} onChanged={replace} onFailed={(e) => failed(e, n)} onDelete={() => setDeleting(n)} />
            ))}
          </ul>
          {state.next ? (
            <button type="button" className="secondary more" onClick={loadMore} disabled={more}>
              {more ? "Loading…" : "Show more Notes"}
            </button>
          ) : null}
        </>
      ) : null}
      <DeleteDialog
        note={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={(n, w) => {
          setDeleting(null);
          setUndo({ id: n.id, title: n.title, version: w?.version ?? 0 });
          edit((notes) => notes.filter((x) => x.id !== n.id));
        }}
        onFailed={(e) => {
          const n = deleting;
          setDeleting(null);
          failed(e, n ?? undefined);
        }}
      />
    </section>
  );
}

function NoteRow(props: { note: Note; onChanged: (n: Note) => void; onFailed: (e: unknown) => void; onDelete: () => void }) {
  const n = props.note;
  const id = useId();
  const [renaming, setRenaming] = useState(false);
  const [title, setTitle] = useState(n.title);
  const [busy, setBusy] = useState(false);
  const [fieldError, setFieldError] = useState("");
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);

  useEffect(() => {
    if (renaming) input.current?.select();
  }, [renaming]);
  // The rename closed: the focus goes back to the Rename button in the
  // render that shows it, but only if it went nowhere (the form it was in
  // is gone); a person who has moved on meanwhile keeps theirs.
  useLayoutEffect(() => {
    if (renaming || !refocus.current) return;
    refocus.current = false;
    const at = document.activeElement;
    if (!at || at === document.body) renameButton.current?.focus();
  }, [renaming]);

  const startRename = () => {
    setTitle(n.title);
    setFieldError("");
    setRenaming(true);
  };
  const stopRename = () => {
    setRenaming(false);
    setFieldError("");
    refocus.current = true;
  };
  const save = (e?: FormEvent) => {
    e?.preventDefault();
    const t = title.trim();
    if (t === "") {
      setFieldError("A Note needs a title: type one, or press Escape to keep the old one.");
      return;
    }
    if (t === n.title) {
      stopRename();
      return;
    }
    setBusy(true);
    api
      .patchNote(n, { title: t })
      .then((updated) => {
        props.onChanged({ ...n, ...updated });
        stopRename();
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.field === "title") setFieldError(err.message);
        else {
          stopRename();
          props.onFailed(err);
        }
      })
      .finally(() => setBusy(false));
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "Escape") {
      e.preventDefault();
      stopRename();
    }
  };
  const toggle = () => {
    setBusy(true);
    api
      .patchNote(n, { approved: !n.approved })
      .then((updated) => props.onChanged({ ...n, ...updated, approved: updated?.approved ?? !n.approved }))
      .catch(props.onFailed)
      .finally(() => setBusy(false));
  };

  return (
    <li className="note" aria-busy={busy || undefined}>
      <div className="note-main">
        {renaming ? (
          <form className="rename" onSubmit={save}>
            <label className="sr-only" htmlFor={id + "-title"}>
              New title for {n.title}
            </label>
            <input
              id={id + "-title"}
              ref={input}
              value={title}
              maxLength={2 * MaxTitle}
              onChange={(e) => {
                setTitle(e.target.value);
                setFieldError("");
              }}
              onKeyDown={onKey}
              aria-invalid={fieldError ? true : undefined}
              aria-describedby={fieldError ? id + "-err" : undefined}
              disabled={busy}
            />
            <button type="submit" className="primary small" disabled={busy}>
              Save
            </button>
            <button type="button" className="ghost small" onClick={stopRename} disabled={busy}>
              Cancel
            </button>
            {fieldError ? (
              <p className="field-error" id={id + "-err"} role="alert">
                {fieldError}
              </p>
            ) : null}
          </form>
        ) : (
          <Link to={"/notes/" + encodeURIComponent(n.id)} className="note-title">
            <span id={id + "-name"}>{n.title || "Untitled"}</span>
          </Link>
        )}
        {n.updated_at ? (
          <span className="note-meta">
            Updated <time dateTime={n.updated_at}>{when(n.updated_at)}</time>
          </span>
        ) : null}
      </div>
      <div className="note-actions">
        <span className="switch-wrap">
          <button
            type="button"
            id={id + "-switch"}
            role="switch"
            className="switch"
            aria-checked={n.approved}
            aria-labelledby={id + "-sw " + id + "-name"}
            onClick={toggle}
            disabled={busy}
          >
            <span className="knob" aria-hidden="true" />
          </button>
          <label id={id + "-sw"} className="switch-label" htmlFor={id + "-switch"}>
            Agents can reach this Note
          </label>
        </span>
        {!renaming ? (
          <button type="button" ref={renameButton} className="ghost small" onClick={startRename} aria-label={"Rename " + n.title}>
            Rename
          </button>
        ) : null}
        <button type="button" className="ghost small danger-text" onClick={props.onDelete} aria-label={"Move to trash: " + n.title}>
          Move to trash
        </button>
      </div>
    </li>
  );
}

function DeleteDialog(props: { note: Note | null; onClose: () => void; onDeleted: (n: Note, w: Written | undefined) => void; onFailed: (e: unknown) => void }) {
  const [busy, setBusy] = useState(false);
  const n = props.note;
  const confirm = () => {
    if (!n) return;
    setBusy(true);
    api
      .deleteNote(n)
      .then((w) => props.onDeleted(n, w))
      .catch(props.onFailed)
      .finally(() => setBusy(false));
  };
  return (
    <Dialog id="delete" open={n !== null} title="Move this Note to the trash?" onClose={props.onClose}>
      <p>
        “{n?.title}” leaves your Notes and every agent's reach. The trash keeps it, with its tabs, sources, files and history, for 30 days:
        restore it from Trash until then.
      </p>
      <div className="dialog-actions">
        <button type="button" className="secondary" onClick={props.onClose} disabled={busy} autoFocus>
          Cancel
        </button>
        <button type="button" className="danger" onClick={confirm} disabled={busy}>
          {busy ? "Moving…" : "Move to trash"}
        </button>
      </div>
    </Dialog>
  );
}
