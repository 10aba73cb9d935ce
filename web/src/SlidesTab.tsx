import type { TabProps } from "./tabs";

// The slides tab.

export function SlidesTab({ content }: TabProps) {
  const slides = content.slides ?? [];
  if (slides.length === 0) return <div className="empty"><p>No slides yet: agents can add them with slide_add.</p></div>;
  return (
    <ol className="slides-read">
      {slides.map((s, i) => (
        <li key={s.slide_id} className="slide-card">
          <span className="slide-no">Slide {i + 1}</span>
          <h2>{s.title || "Untitled slide"}</h2>
          {s.body ? <p>{s.body}</p> : null}
          {s.notes ? <p className="slide-notes">Notes: {s.notes}</p> : null}
        </li>
      ))}
    </ol>
  );
}

