// PendingBadge is the count beside the navigation's "Needs your approval".
export function PendingBadge({ count }: { count: number | null }) {
  if (!count) return null;
  const shown = count > 99 ? "99+" : String(count);
  return (
    <span className="nav-badge">
      <span aria-hidden="true">{shown}</span>
      <span className="sr-only">{`, ${count} pending`}</span>
    </span>
  );
}

