import type { ReactNode } from "react";
import type { Slide } from "../../api";
import { layoutOf, themeOf } from "./layouts";

// SlideView draws a slide in its layout and theme, at any size: its type
// is in container units, so a thumbnail is the slide scaled down.

// A body is lines of text; a line that starts with "- ", "* " or "• " is a
// bullet.
function bodyBlocks(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let bullets: string[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push(<p key={out.length}>{para.join("\n")}</p>);
    if (bullets.length)
      out.push(
        <ul key={out.length}>
          {bullets.map((b, i) => (
            <li key={i}>{b}</li>
          ))}
        </ul>,
      );
    para = [];
    bullets = [];
  };
  for (const line of text.split("\n")) {
    const m = /^\s*[-*•]\s+(.*)$/.exec(line);
    if (m) {
      if (para.length) {
        const b = bullets;
        bullets = [];
        flush();
        bullets = b;
      }
      bullets.push(m[1]);
    } else if (line.trim() === "") {
      flush();
    } else {
      if (bullets.length) flush();
      para.push(line);
    }
  }
  flush();
  return out;
}

// columns splits a two-column body at a line "---", or else in half at
// a blank line.
export function columns(body: string): [string, string] {
  const lines = body.split("\n");
  const cut = lines.findIndex((l) => l.trim() === "---");
  if (cut >= 0) return [lines.slice(0, cut).join("\n"), lines.slice(cut + 1).join("\n")];
  const paras = body.split(/\n\s*\n/);
  if (paras.length < 2) return [body, ""];
  const half = Math.ceil(paras.length / 2);
  return [paras.slice(0, half).join("\n\n"), paras.slice(half).join("\n\n")];
}

export function SlideView({ slide, className = "" }: { slide: Slide; className?: string }) {
  const layout = layoutOf(slide);
  const title = slide.title.trim() || "Untitled slide";
  let inner: ReactNode;
  switch (layout) {
    case "title":
    case "section":
      inner = (
        <div className="sl-center">
          <div className="sl-title">{title}</div>
          {slide.body.trim() ? <div className="sl-sub">{bodyBlocks(slide.body)}</div> : null}
        </div>
      );
      break;
    case "two-column": {
      const [a, b] = columns(slide.body);
      inner = (
        <>
          <div className="sl-title">{title}</div>
          <div className="sl-cols">
            <div className="sl-body">{bodyBlocks(a)}</div>
            <div className="sl-body">{bodyBlocks(b)}</div>
          </div>
        </>
      );
      break;
    }
    case "quote":
      inner = (
        <figure className="sl-quote">
          <blockquote>{slide.body.trim() ? bodyBlocks(slide.body) : <p>{title}</p>}</blockquote>
          {slide.body.trim() ? <figcaption>{title}</figcaption> : null}
        </figure>
      );
      break;
    default:
      inner = (
        <>
          <div className="sl-title">{title}</div>
          <div className="sl-body">{bodyBlocks(slide.body)}</div>
        </>
      );
  }
  return (
    <div className={"sl-slide " + className} data-layout={layout} data-theme={themeOf(slide)}>
      <div className="sl-frame">{inner}</div>
    </div>
  );
}
