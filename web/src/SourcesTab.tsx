import type { TabProps } from "./tabs";

// The Sources tab.

export function SourcesTab({ content }: TabProps) {
  const sources = content.sources ?? [];
  if (sources.length === 0) return <div className="empty"><p>No sources attached yet.</p></div>;
  return (
    <ul className="plain-list">
      {sources.map((s) => (
        <li key={s.source_id}>
          <a href={safeURL(s.url)} rel="noopener noreferrer" target="_blank">
            {s.title || s.url}
          </a>
          <span className="muted"> {s.normalized_url}</span>
        </li>
      ))}
    </ul>
  );
}

// safeURL keeps only web addresses as links.
function safeURL(u: string): string | undefined {
  return /^https?:\/\//i.test(u) ? u : undefined;
}

