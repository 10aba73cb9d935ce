// The server's limits (it checks them too, and says which one a file
// passes).
export const MaxFileBytes = 25 * 1024 * 1024;
export const MaxFilesPerNote = 100;
export const MaxNoteFileBytes = 200 * 1024 * 1024;

// Upload is one file on its way, as the list of uploads shows it.
export type Upload = {
  id: string; // the row's React key
  name: string;
  size: number;
  loaded: number;
  state: "waiting" | "sending" | "done" | "failed";
  error?: string;
};

export function percent(loaded: number, total: number): number {
  return total <= 0 ? 100 : Math.min(100, Math.round((loaded / total) * 100));
}

export function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  const mb = n / 1024 / 1024;
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}
