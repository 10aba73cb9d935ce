import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import { ApiError, call, writers, type Source, type TabContent } from "./api";
import { Dialog, ErrorBox, when } from "./ui";
import type { TabProps } from "./tabs";
import "./sources.css";

// The Sources tab: the pages the Note cites. A page is added by its URL
// (and a title); the server normalizes the URL as it does for agents, so
// the same page in another spelling is refused as already attached.

type SourceAdded = { source_id: string; version: number };

// MaxURL and MaxTitle bound what is typed here; the server has its own rules.
const MaxURL = 2048;
const MaxTitle = 300;

const sourcesPath = (id: string) => "/api/notes/" + encodeURIComponent(id) + "/sources";

export function SourcesTab({ noteId, content, me, remote, onVersion }: TabProps) {
  const [sources, setSources] = useState<Source[]>(content.sources ?? []);
  const [version, setVersion] = useState(content.version);
  const [url, setURL] = useState("");
  const [title, setTitle] = useState("");
  const [urlErr, setURLErr] = useState("");
  const [titleErr, setTitleErr] = useState("");
  const [notice, setNotice] = useState("");
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState<Source | null>(null);
  const [loadErr, setLoadErr] = useState("");
  const urlRef = useRef<HTMLInputElement>(null);
  const versionRef = useRef(content.version);

  const apply = useCallback(
    (c: TabContent) => {
      setSources(c.sources ?? []);
      versionRef.current = Math.max(versionRef.current, c.version);
      setVersion(versionRef.current);
      onVersion(c.version);
    },
    [onVersion],
  );

  const reload = useCallback(
    (signal?: AbortSignal) => {
      setLoadErr("");
      return call<TabContent>("/api/notes/" + encodeURIComponent(noteId) + "/tabs/" + encodeURIComponent(content.tab_id), { signal })
        .then(apply)
        .catch((e: unknown) => {
          if (e instanceof DOMException && e.name === "AbortError") return;
          setLoadErr(e instanceof Error ? e.message : String(e));
        });
    },
    [noteId, content.tab_id, apply],
  );

  // Any write to the Note moves its version; a write to the sources reloads them.
  useEffect(() => {
    if (!remote) return;
    versionRef.current = Math.max(versionRef.current, remote.version);
    setVersion(versionRef.current);
    if (!remote.changed.includes(content.tab_id) && !remote.changed.includes("sources")) return;
    const ctl = new AbortController();
    void reload(ctl.signal);
    return () => ctl.abort();
  }, [remote, content.tab_id, reload]);

  const stale = (e: ApiError, what: string) => {
    const who = writers(e.changes, me) || "someone";
    setNotice(`The Note changed meanwhile (by ${who}), so ${what} was not done. The sources are up to date now: try again.`);
    void reload();
  };

  const add = (e: FormEvent) => {
    e.preventDefault();
    setNotice("");
    setURLErr("");
    setTitleErr("");
    const u = url.trim();
    if (u === "") {
      setURLErr("Give the page's address, starting with https:// or http://.");
      urlRef.current?.focus();
      return;
    }
    if (!/^https?:\/\//i.test(u)) {
      setURLErr("Only web pages can be cited: the address starts with https:// or http://.");
      urlRef.current?.focus();
      return;
    }
    const t = title.trim() || defaultTitle(u);
    setBusy(true);
    call<SourceAdded>(sourcesPath(noteId), { method: "POST", body: { url: u, title: t }, ifMatch: versionRef.current })
      .then((r) => {
        versionRef.current = Math.max(versionRef.current, r.version);
        onVersion(r.version);
        setURL("");
        setTitle("");
        setNotice("");
        void reload();
        urlRef.current?.focus();
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 409) {
          setURLErr("This source is already attached");
          urlRef.current?.focus();
        } else if (err instanceof ApiError && err.status === 412) {
          stale(err, "adding the source");
        } else if (err instanceof ApiError && err.field === "title") {
          setTitleErr(err.message);
        } else if (err instanceof ApiError && err.field === "url") {
          setURLErr(err.message);
          urlRef.current?.focus();
        } else {
          setNotice(err instanceof Error ? err.message : String(err));
        }
      })
      .finally(() => setBusy(false));
  };

  const remove = (s: Source) => {
    setBusy(true);
    setNotice("");
    call<void>(sourcesPath(noteId) + "/" + encodeURIComponent(s.source_id), { method: "DELETE", ifMatch: versionRef.current })
      .then(() => reload())
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 412) stale(err, "deleting the source");
        else setNotice(err instanceof Error ? err.message : String(err));
      })
      .finally(() => {
        setBusy(false);
        setDeleting(null);
      });
  };

  return (
    <div className="sources" data-version={version}>
      <form className="source-add" onSubmit={add} noValidate aria-labelledby="source-add-title">
        <h2 id="source-add-title" className="sr-only">
          Add a source
        </h2>
        <label className="field source-url">
          <span>Page address</span>
          <input
            ref={urlRef}
            id="source-url"
            type="url"
            inputMode="url"
            autoComplete="url"
            placeholder="https://example.com/article"
            value={url}
            maxLength={MaxURL}
            aria-invalid={urlErr !== ""}
            aria-describedby={urlErr ? "source-url-error" : undefined}
            onChange={(e) => {
              setURL(e.target.value);
              setURLErr("");
            }}
          />
        </label>
        <label className="field source-title">
          <span>
            Title <span className="muted">(optional)</span>
          </span>
          <input
            id="source-title"
            value={title}
            maxLength={MaxTitle}
            placeholder="The page's title"
            aria-invalid={titleErr !== ""}
            aria-describedby={titleErr ? "source-title-error" : undefined}
            onChange={(e) => {
              setTitle(e.target.value);
              setTitleErr("");
            }}
          />
        </label>
        <button type="submit" className="primary source-submit" disabled={busy}>
          {busy ? "Adding…" : "Add source"}
        </button>
        {urlErr ? (
          <p className="field-error source-error" id="source-url-error" role="alert">
            {urlErr}
          </p>
        ) : null}
        {titleErr ? (
          <p className="field-error source-error" id="source-title-error" role="alert">
            {titleErr}
          </p>
        ) : null}
      </form>
      {notice ? (
        <div className="notice" role="alert">
          <p>{notice}</p>
        </div>
      ) : null}
      {loadErr ? <ErrorBox text={loadErr} onRetry={() => void reload()} /> : null}
      {sources.length === 0 ? (
        <div className="empty">
          <p>No sources attached yet. Add the address of a page this Note cites; agents see the sources too.</p>
        </div>
      ) : (
        <ul className="source-list" aria-label="Sources">
          {sources.map((s) => {
            const href = safeURL(s.url);
            return (
              <li key={s.source_id} className="source" data-source-id={s.source_id}>
                <div className="source-main">
                  {href ? (
                    <a href={href} rel="noopener noreferrer" target="_blank" className="source-title-link">
                      {s.title || s.url}
                    </a>
                  ) : (
                    <span className="source-title-link">{s.title || s.url}</span>
                  )}
                  <span className="source-norm muted">{s.normalized_url}</span>
                  <span className="source-meta muted">
                    Added {s.added_at ? <time dateTime={s.added_at}>{when(s.added_at)}</time> : null}
                  </span>
                </div>
                <button type="button" className="ghost small danger-text" onClick={() => setDeleting(s)} disabled={busy} aria-label={`Delete the source “${s.title || s.url}”`}>
                  Delete
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <Dialog id="delete-source" open={deleting !== null} title="Delete this source?" onClose={() => setDeleting(null)}>
        <p>
          “{deleting?.title}” ({deleting?.normalized_url}) will no longer be cited by this Note, for you and for every agent. The Note's History keeps
          it.
        </p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setDeleting(null)} disabled={busy} autoFocus>
            Cancel
          </button>
          <button type="button" className="danger" id="delete-source-confirm" onClick={() => deleting && remove(deleting)} disabled={busy}>
            {busy ? "Deleting…" : "Delete source"}
          </button>
        </div>
      </Dialog>
    </div>
  );
}

// defaultTitle names a page by its address when no title is given.
function defaultTitle(u: string): string {
  try {
    const x = new URL(u);
    const path = x.pathname.replace(/\/+$/, "");
    return (x.hostname + path).slice(0, MaxTitle) || u.slice(0, MaxTitle);
  } catch {
    return u.slice(0, MaxTitle);
  }
}

// safeURL keeps only web addresses as links.
function safeURL(u: string): string | undefined {
  return /^https?:\/\//i.test(u) ? u : undefined;
}
