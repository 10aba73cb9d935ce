import { useCallback, useEffect, useRef, useState, type DragEvent } from "react";
import { ApiError, call, getCSRF, problemText, signInPath, type NoteFile, type TabContent } from "./api";
import type { TabProps } from "./tabs";
import { Dialog, ErrorBox, when } from "./ui";
import "./files.css";

// The Files tab: a Note's files, uploaded here by people (never by
// agents, who see the files' names and sizes only). Each upload is the
// raw file as the body of POST /api/notes/{id}/files, with the version
// the list was read at; its progress is the request's upload progress.

// The server's limits (it checks them too, and says which one a file
// passes).
export const MaxFileBytes = 25 * 1024 * 1024;
export const MaxFilesPerNote = 100;
export const MaxNoteFileBytes = 200 * 1024 * 1024;

type Upload = {
  key: string; // the Idempotency-Key, also the row's React key
  name: string;
  size: number;
  loaded: number;
  state: "waiting" | "sending" | "done" | "failed";
  error?: string;
};

type Answer = { status: number; data: any };

export function FilesTab({ noteId, content, remote, onVersion }: TabProps) {
  const [files, setFiles] = useState<NoteFile[]>(content.files ?? []);
  const version = useRef(content.version);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [error, setError] = useState("");
  const [deleting, setDeleting] = useState<NoteFile | null>(null);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const queue = useRef<{ up: Upload; file: File }[]>([]);
  const running = useRef(false);

  const seen = useCallback(
    (v: number) => {
      if (v > version.current) version.current = v;
      onVersion(version.current);
    },
    [onVersion],
  );

  const reload = useCallback(() => {
    setError("");
    call<TabContent>(`/api/notes/${encodeURIComponent(noteId)}/tabs/files`)
      .then((c) => {
        setFiles(c.files ?? []);
        version.current = c.version;
        onVersion(c.version);
      })
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, [noteId, onVersion]);

  // Another page or writer changed the Note: a change of the files tab is
  // read again; any other only moves the version this tab writes on.
  useEffect(() => {
    if (!remote || remote.version <= version.current) return;
    if (remote.changed.includes("files")) reload();
    else version.current = remote.version;
  }, [remote, reload]);

  const patch = (key: string, p: Partial<Upload>) => setUploads((us) => us.map((u) => (u.key === key ? { ...u, ...p } : u)));

  const pump = useCallback(async () => {
    if (running.current) return;
    running.current = true;
    try {
      for (let next = queue.current.shift(); next; next = queue.current.shift()) {
        const { up, file } = next;
        patch(up.key, { state: "sending" });
        try {
          let a = await send(noteId, file, version.current, up.key, (loaded) => patch(up.key, { loaded }));
          // Adding a file conflicts with nothing: on a newer version, the
          // same upload (same key) goes again on it, once.
          if (a.status === 412 && typeof a.data?.current_version === "number") {
            version.current = a.data.current_version;
            a = await send(noteId, file, version.current, up.key, (loaded) => patch(up.key, { loaded }));
          }
          if (a.status !== 201) throw new ApiError(a.status, a.status === 0 ? "The upload was cut off: check the connection and try again." : problemText(a.status, a.data));
          seen(a.data.version);
          const f: NoteFile = a.data.file;
          setFiles((fs) => (fs.some((x) => x.file_id === f.file_id) ? fs : [...fs, f]));
          patch(up.key, { state: "done", loaded: up.size });
        } catch (e) {
          patch(up.key, { state: "failed", error: e instanceof Error ? e.message : String(e) });
        }
      }
    } finally {
      running.current = false;
    }
  }, [noteId, seen]);

  const add = (list: FileList | File[]) => {
    const picked = Array.from(list);
    if (picked.length === 0) return;
    const ups: Upload[] = [];
    for (const file of picked) {
      const up: Upload = { key: newKey(), name: file.name, size: file.size, loaded: 0, state: "waiting" };
      if (file.size > MaxFileBytes) {
        up.state = "failed";
        up.error = `Too large: ${file.size.toLocaleString("en")} bytes, and a file may be at most ${size(MaxFileBytes)} (${MaxFileBytes.toLocaleString("en")} bytes). Nothing was sent.`;
      } else {
        queue.current.push({ up, file });
      }
      ups.push(up);
    }
    // The newest uploads stay in view (done ones until dismissed).
    setUploads((us) => [...us, ...ups].slice(-8));
    void pump();
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (e.dataTransfer?.files) add(e.dataTransfer.files);
  };

  const used = files.reduce((n, f) => n + f.size_bytes, 0);
  return (
    <div className="files">
      <div
        className={"files-drop" + (over ? " over" : "")}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <p>
          <strong>Drop files here</strong> or{" "}
          <button type="button" className="primary small" onClick={() => input.current?.click()}>
            Upload files
          </button>
        </p>
        <p className="muted files-limits" id="files-limits">
          Up to {size(MaxFileBytes)} per file, {MaxFilesPerNote} files and {size(MaxNoteFileBytes)} per Note ({files.length} files, {size(used)} used). Files are
          for people: agents see their names and sizes, never their content.
        </p>
        <input
          ref={input}
          type="file"
          multiple
          hidden
          aria-describedby="files-limits"
          aria-label="Choose files to upload"
          data-testid="files-input"
          onChange={(e) => {
            if (e.target.files) add(e.target.files);
            e.target.value = "";
          }}
        />
      </div>

      {uploads.length > 0 ? (
        <ul className="files-uploads" aria-label="Uploads">
          {uploads.map((u) => (
            <li key={u.key} className={"files-upload " + u.state}>
              <span className="files-upload-name">{u.name}</span>
              {u.state === "failed" ? (
                <span className="files-upload-error" role="alert">
                  {u.error}
                </span>
              ) : (
                <>
                  <progress max={Math.max(u.size, 1)} value={u.state === "done" ? Math.max(u.size, 1) : u.loaded} aria-label={`Uploading ${u.name}`} />
                  <span className="muted files-upload-state" aria-live="polite">
                    {u.state === "done" ? "Uploaded" : u.state === "waiting" ? "Waiting…" : `${percent(u.loaded, u.size)}%`}
                  </span>
                </>
              )}
              {u.state === "failed" || u.state === "done" ? (
                <button type="button" className="ghost small" onClick={() => setUploads((us) => us.filter((x) => x.key !== u.key))} aria-label={`Dismiss ${u.name}`}>
                  Dismiss
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}

      {error ? <ErrorBox text={error} onRetry={reload} /> : null}

      {files.length === 0 ? (
        <div className="empty">
          <p>No files attached yet. Upload a file, or drop one here, to keep it with this Note.</p>
        </div>
      ) : (
        <ul className="plain-list files-list" aria-label="Files">
          {files.map((f) => (
            <li key={f.file_id} className="files-row">
              <div className="files-main">
                <a className="files-name" href={`/api/notes/${encodeURIComponent(noteId)}/files/${encodeURIComponent(f.file_id)}`} download={f.name}>
                  {f.name}
                </a>
                <span className="muted files-meta">
                  {f.content_type} · {size(f.size_bytes)} · added {when(f.added_at)}
                </span>
              </div>
              <button type="button" className="ghost small danger-text" onClick={() => setDeleting(f)} aria-label={`Delete ${f.name}`}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}

      <DeleteFileDialog
        noteId={noteId}
        file={deleting}
        version={() => version.current}
        onClose={() => setDeleting(null)}
        onDeleted={(f, v) => {
          setDeleting(null);
          seen(v);
          setFiles((fs) => fs.filter((x) => x.file_id !== f.file_id));
        }}
        onFailed={(e) => {
          setDeleting(null);
          setError(e instanceof Error ? e.message : String(e));
          if (e instanceof ApiError && e.status === 404) reload();
        }}
      />
    </div>
  );
}

function DeleteFileDialog(props: {
  noteId: string;
  file: NoteFile | null;
  version: () => number;
  onClose: () => void;
  onDeleted: (f: NoteFile, version: number) => void;
  onFailed: (e: unknown) => void;
}) {
  const [busy, setBusy] = useState(false);
  const f = props.file;
  const confirm = async () => {
    if (!f) return;
    setBusy(true);
    const path = `/api/notes/${encodeURIComponent(props.noteId)}/files/${encodeURIComponent(f.file_id)}`;
    try {
      let v = props.version();
      const del = (at: number) => fetch(path, { method: "DELETE", credentials: "same-origin", headers: { "X-CSRF-Token": getCSRF(), "If-Match": `"${at}"`, Accept: "application/problem+json" } });
      let r = await del(v);
      // Deleting a file conflicts with nothing but its own absence (404).
      if (r.status === 412) {
        const p = await r.json().catch(() => undefined);
        if (typeof p?.current_version === "number") r = await del((v = p.current_version));
        else throw new ApiError(412, problemText(412, p));
      }
      if (r.status === 401) location.assign(signInPath());
      if (r.status !== 204) {
        const p = await r.json().catch(() => undefined);
        throw new ApiError(r.status, problemText(r.status, p));
      }
      props.onDeleted(f, Number((r.headers.get("ETag") ?? "").replace(/"/g, "")) || v + 1);
    } catch (e) {
      props.onFailed(e instanceof TypeError ? new ApiError(0, "Foundry cannot be reached: check the connection and try again.") : e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog id="delete-file" open={f !== null} title="Delete this file?" onClose={props.onClose}>
      <p className="files-confirm">
        “{f?.name}” will be removed from this Note. Its earlier versions in the history keep it: restoring one brings the file back.
      </p>
      <div className="dialog-actions">
        <button type="button" className="secondary" onClick={props.onClose} disabled={busy} autoFocus>
          Cancel
        </button>
        <button type="button" className="danger" onClick={confirm} disabled={busy}>
          {busy ? "Deleting…" : "Delete file"}
        </button>
      </div>
    </Dialog>
  );
}

// send uploads one file with XMLHttpRequest, whose upload progress fetch
// does not give.
function send(noteId: string, file: File, version: number, key: string, progress: (loaded: number) => void): Promise<Answer> {
  return new Promise((resolve) => {
    const x = new XMLHttpRequest();
    x.open("POST", `/api/notes/${encodeURIComponent(noteId)}/files?name=${encodeURIComponent(file.name)}`);
    x.setRequestHeader("X-CSRF-Token", getCSRF());
    x.setRequestHeader("If-Match", `"${version}"`);
    x.setRequestHeader("Idempotency-Key", key);
    x.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    x.setRequestHeader("Accept", "application/json, application/problem+json");
    x.upload.onprogress = (e) => progress(e.loaded);
    x.onload = () => {
      if (x.status === 401) location.assign(signInPath());
      let data: any;
      try {
        data = JSON.parse(x.responseText);
      } catch {
        data = undefined;
      }
      resolve({ status: x.status, data });
    };
    x.onerror = () => resolve({ status: 0, data: undefined });
    x.onabort = () => resolve({ status: 0, data: undefined });
    x.send(file);
  });
}

function newKey(): string {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return "upload-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function percent(loaded: number, total: number): number {
  return total <= 0 ? 100 : Math.min(100, Math.round((loaded / total) * 100));
}

export function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  const mb = n / 1024 / 1024;
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}
