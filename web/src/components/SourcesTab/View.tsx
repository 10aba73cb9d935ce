import { useRef, useState, type FormEvent } from "react";
import type { Source } from "../../api";
import { Dialog, ErrorBox, when } from "../../ui";
import type { TabProps } from "../tab";
import { defaultTitle, MaxTitle, MaxURL, safeURL } from "./types";
import { useSources } from "./useSources";
import "./sources.css";

// The Sources tab: the pages the Note cites. A page is added by its URL
// (and a title); the server normalizes the URL as it does for agents, so
// the same page in another spelling is refused as already attached.
export function SourcesTab(p: TabProps) {
  const s = useSources(p);
  const [url, setURL] = useState("");
  const [title, setTitle] = useState("");
  const [urlErr, setURLErr] = useState("");
  const [titleErr, setTitleErr] = useState("");
  const [deleting, setDeleting] = useState<Source | null>(null);
  const urlRef = useRef<HTMLInputElement>(null);

  const submit = (e: FormEvent) => {
    e.preventDefault();
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
    void s.add(u, title.trim() || defaultTitle(u)).then((err) => {
      if (err === null) {
        setURL("");
        setTitle("");
        urlRef.current?.focus();
        return;
      }
      setURLErr(err.url);
      setTitleErr(err.title);
      if (err.url) urlRef.current?.focus();
    });
  };

  const remove = async (x: Source) => {
    await s.remove(x);
    setDeleting(null);
  };

  return (
    <div className="sources" data-version={s.version}>
      <form className="source-add" onSubmit={submit} noValidate aria-labelledby="source-add-title">
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
        <button type="submit" className="primary source-submit" disabled={s.busy}>
          {s.busy ? "Adding…" : "Add source"}
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
      {s.notice ? (
        <div className="notice" role="alert">
          <p>{s.notice}</p>
        </div>
      ) : null}
      {s.loadError ? <ErrorBox text={s.loadError} onRetry={s.reload} /> : null}
      {s.sources.length === 0 ? (
        <div className="empty">
          <p>No sources attached yet. Add the address of a page this Note cites; agents see the sources too.</p>
        </div>
      ) : (
        <ul className="source-list" aria-label="Sources">
          {s.sources.map((x) => {
            const href = safeURL(x.url);
            return (
              <li key={x.source_id} className="source" data-source-id={x.source_id}>
                <div className="source-main">
                  {href ? (
                    <a href={href} rel="noopener noreferrer" target="_blank" className="source-title-link">
                      {x.title || x.url}
                    </a>
                  ) : (
                    <span className="source-title-link">{x.title || x.url}</span>
                  )}
                  <span className="source-norm muted">{x.normalized_url}</span>
                  <span className="source-meta muted">
                    Added {x.added_at ? <time dateTime={x.added_at}>{when(x.added_at)}</time> : null}
                  </span>
                </div>
                <button type="button" className="ghost small danger-text" onClick={() => setDeleting(x)} disabled={s.busy} aria-label={`Delete the source “${x.title || x.url}”`}>
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
          <button type="button" className="secondary" onClick={() => setDeleting(null)} disabled={s.busy} autoFocus>
            Cancel
          </button>
          <button type="button" className="danger" id="delete-source-confirm" onClick={() => deleting && void remove(deleting)} disabled={s.busy}>
            {s.busy ? "Deleting…" : "Delete source"}
          </button>
        </div>
      </Dialog>
    </div>
  );
}

