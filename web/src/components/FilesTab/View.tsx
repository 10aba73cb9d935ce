import { useRef, useState, type DragEvent } from "react";
import type { NoteFile } from "../../api";
import { Dialog, ErrorBox, when } from "../../ui";
import type { TabProps } from "../tab";
import { MaxFileBytes, MaxFilesPerNote, MaxNoteFileBytes, percent, size } from "./types";
import { useFiles } from "./useFiles";
import "./files.css";

// The Files tab: a Note's files, uploaded here by people (never by
// agents, who see the files' names and sizes only); each upload's
// progress is the request's upload progress.
export function FilesTab(p: TabProps) {
  const fl = useFiles(p);
  const { files } = fl;
  const [deleting, setDeleting] = useState<NoteFile | null>(null);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (e.dataTransfer?.files) fl.add(e.dataTransfer.files);
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
            if (e.target.files) fl.add(e.target.files);
            e.target.value = "";
          }}
        />
      </div>

      {fl.uploads.length > 0 ? (
        <ul className="files-uploads" aria-label="Uploads">
          {fl.uploads.map((u) => (
            <li key={u.id} className={"files-upload " + u.state}>
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
                <button type="button" className="ghost small" onClick={() => fl.dismiss(u.id)} aria-label={`Dismiss ${u.name}`}>
                  Dismiss
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}

      {fl.error ? <ErrorBox text={fl.error} onRetry={fl.reload} /> : null}

      {files.length === 0 ? (
        <div className="empty">
          <p>No files attached yet. Upload a file, or drop one here, to keep it with this Note.</p>
        </div>
      ) : (
        <ul className="plain-list files-list" aria-label="Files">
          {files.map((f) => (
            <li key={f.file_id} className="files-row">
              <div className="files-main">
                <a className="files-name" href={fl.fileHref(f)} download={f.name}>
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
        file={deleting}
        onClose={() => setDeleting(null)}
        onConfirm={async (f) => {
          await fl.remove(f);
          setDeleting(null);
        }}
      />
    </div>
  );
}

function DeleteFileDialog(props: { file: NoteFile | null; onClose: () => void; onConfirm: (f: NoteFile) => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const f = props.file;
  const confirm = async () => {
    if (!f) return;
    setBusy(true);
    await props.onConfirm(f);
    setBusy(false);
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
