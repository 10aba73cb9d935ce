import type { TabProps } from "./tabs";

// The Files tab.

export function FilesTab({ content }: TabProps) {
  const files = content.files ?? [];
  if (files.length === 0) return <div className="empty"><p>No files attached yet.</p></div>;
  return (
    <ul className="plain-list">
      {files.map((f) => (
        <li key={f.file_id}>
          <strong>{f.name}</strong> <span className="muted">{f.content_type} · {size(f.size_bytes)}</span>
        </li>
      ))}
    </ul>
  );
}

function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
