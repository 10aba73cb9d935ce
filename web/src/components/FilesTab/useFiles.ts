import { useCallback, useState } from "react";
import { api, ApiError, errorText, keys, queryClient, type NoteFile, type TabContent } from "../../api";
import { useFollowedTab } from "../useFollowedTab";
import { newKey, useSave } from "../../save";
import type { TabProps } from "../tab";
import { MaxFileBytes, size, type Upload } from "./types";

// useFiles is the Files tab's state: the Note's files (the tab's query),
// the uploads on their way, and uploading and deleting through the Note's
// save path. Each upload is the raw file as the body of POST
// /api/notes/{id}/files, with the version the list was read at; adding or
// deleting a file conflicts with nothing (but a deleted file's absence),
// so after a 412 the same change goes once more on the new version.
export function useFiles({ noteId, content, remote, onVersion }: TabProps) {
  const tabId = content.tab_id;
  const { saver } = useSave({ version: content.version, onVersion });
  // Another page or writer changed the Note: a change of the files tab is
  // read again; any other only moves the version this tab writes on.
  const { q, reload: refetch } = useFollowedTab({
    noteId,
    content,
    remote,
    touches: (r) => r.changed.includes("files"),
    seen: useCallback((v: number) => saver.seen(v), [saver]),
  });
  const files: NoteFile[] = q.data.files ?? [];
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [error, setError] = useState("");

  const reload = () => {
    setError("");
    void refetch();
  };
  const setFiles = (f: (fs: NoteFile[]) => NoteFile[]) =>
    queryClient.setQueryData<TabContent>(keys.tab(noteId, tabId), (c) => (c ? { ...c, files: f(c.files ?? []) } : c));

  const patch = (id: string, p: Partial<Upload>) => setUploads((us) => us.map((u) => (u.id === id ? { ...u, ...p } : u)));

  const upload = async (up: Upload, file: File) => {
    const out = await saver.run({
      send: (pre) => {
        patch(up.id, { state: "sending" });
        return api.uploadFile({ id: noteId }, file, pre, (loaded) => patch(up.id, { loaded }));
      },
      conflict: () => "again",
      maxConflicts: 1,
      retrying: (e) => patch(up.id, { state: "waiting", error: e.message }),
    });
    if (out.ok) {
      const f = out.value.file;
      setFiles((fs) => (fs.some((x) => x.file_id === f.file_id) ? fs : [...fs, f]));
      patch(up.id, { state: "done", loaded: up.size });
    } else {
      patch(up.id, { state: "failed", error: "conflict" in out ? "The Note kept changing while the file was sent: try again." : errorText(out.error) });
    }
  };

  const add = (list: FileList | File[]) => {
    const picked = Array.from(list);
    if (picked.length === 0) return;
    const ups: Upload[] = [];
    for (const file of picked) {
      const up: Upload = { id: newKey(), name: file.name, size: file.size, loaded: 0, state: "waiting" };
      if (file.size > MaxFileBytes) {
        up.state = "failed";
        up.error = `Too large: ${file.size.toLocaleString("en")} bytes, and a file may be at most ${size(MaxFileBytes)} (${MaxFileBytes.toLocaleString("en")} bytes). Nothing was sent.`;
      } else {
        void upload(up, file);
      }
      ups.push(up);
    }
    // The newest uploads stay in view (done ones until dismissed).
    setUploads((us) => [...us, ...ups].slice(-8));
  };

  const dismiss = (id: string) => setUploads((us) => us.filter((x) => x.id !== id));

  // remove deletes a file; it answers when the dialog may close.
  const remove = async (f: NoteFile) => {
    const out = await saver.run({ send: (pre) => api.deleteFile({ id: noteId }, f.file_id, pre), conflict: () => "again", maxConflicts: 1 });
    if (out.ok) {
      setFiles((fs) => fs.filter((x) => x.file_id !== f.file_id));
      return;
    }
    const e = "conflict" in out ? new ApiError(412, "The Note kept changing while the file was deleted: try again.") : out.error;
    setError(errorText(e));
    if (e instanceof ApiError && e.status === 404) reload();
  };

  return { files, uploads, error, add, dismiss, remove, reload, fileHref: (f: NoteFile) => api.fileHref({ id: noteId }, f.file_id) };
}
