import { useMemo, type ReactNode } from "react";
import { highlightCode, classHighlighter } from "@lezer/highlight";
import { javascriptLanguage, jsxLanguage, tsxLanguage, typescriptLanguage } from "@codemirror/lang-javascript";
import { cssLanguage } from "@codemirror/lang-css";
import type { CompileMessage, Proposal, ProposalFile } from "../../api";

// failing are the compile errors of a proposal that does not compile
// (none for one that compiles, or that has no compile result).
export function failing(p: Proposal): CompileMessage[] {
  const c = p.compile;
  if (!c || (c.ok && (c.errors ?? []).length === 0)) return [];
  return c.errors ?? [];
}

// Compile is the compile result, shown before the buttons.
export function Compile({ p, warnings }: { p: Proposal; warnings: CompileMessage[] }) {
  if (p.kind === "repository" && !p.compile) return null;
  if (!p.compile) {
    return (
      <div className="compile is-unknown">
        <p>This snippet has no compile result yet.</p>
      </div>
    );
  }
  const errors = p.compile.errors ?? [];
  if (p.compile.ok && errors.length === 0) {
    return (
      <div className="compile is-ok">
        <p>
          <span className="compile-mark" aria-hidden="true">
            ✓
          </span>
          Compiles without errors{warnings.length ? ` (${warnings.length} warning${warnings.length === 1 ? "" : "s"})` : ""}.
        </p>
        {warnings.length ? <Messages list={warnings} /> : null}
      </div>
    );
  }
  return (
    <div className="compile is-error">
      <p>
        <span className="compile-mark" aria-hidden="true">
          ✕
        </span>
        Does not compile: {errors.length} error{errors.length === 1 ? "" : "s"}. Approving it puts an app that cannot run in the launcher.
      </p>
      <Messages list={errors} />
      {p.compile.proposer_told ? (
        <p className="compile-told">The agent was told it does not compile, with these errors, and asked to fix them and propose again.</p>
      ) : null}
    </div>
  );
}

export function Messages({ list }: { list: CompileMessage[] }) {
  return (
    <ul className="compile-messages">
      {list.map((m, i) => (
        <li key={i}>
          <code className="compile-where">{where(m)}</code> <span className="compile-text">{m.text}</span>
          {m.line_text ? <Excerpt m={m} /> : null}
        </li>
      ))}
    </ul>
  );
}

function where(m: CompileMessage): string {
  let s = m.file || "(no file)";
  if (m.line > 0) s += ":" + m.line;
  // The column as esbuild counts it (from 0), as its own messages print it.
  if (m.line > 0 && m.column >= 0) s += ":" + m.column;
  return s;
}

// Excerpt is the line the message is about, with a caret under its column.
function Excerpt({ m }: { m: CompileMessage }) {
  const col = Math.max(0, Math.min(m.column, m.line_text.length));
  return (
    <pre className="compile-line">
      {m.line_text}
      {"\n"}
      <span aria-hidden="true">{" ".repeat(col) + "^"}</span>
    </pre>
  );
}

type Piece = { text: string; cls: string };

function parserFor(path: string) {
  const ext = path.toLowerCase().split(".").pop() ?? "";
  switch (ext) {
    case "tsx":
      return tsxLanguage.parser;
    case "ts":
    case "mts":
    case "cts":
      return typescriptLanguage.parser;
    case "jsx":
      return jsxLanguage.parser;
    case "js":
    case "mjs":
    case "cjs":
      return javascriptLanguage.parser;
    case "css":
      return cssLanguage.parser;
  }
  return null;
}

// highlight is the file's lines, each as pieces with the highlighter's
// classes (tok-keyword, tok-string, …), by the language's own parser.
function highlight(path: string, text: string): Piece[][] {
  const src = text.replace(/\r\n?/g, "\n");
  const parser = parserFor(path);
  if (!parser) return src.split("\n").map((l) => (l ? [{ text: l, cls: "" }] : []));
  const lines: Piece[][] = [[]];
  highlightCode(
    src,
    parser.parse(src),
    classHighlighter,
    (code, cls) => {
      if (code) lines[lines.length - 1].push({ text: code, cls });
    },
    () => lines.push([]),
  );
  return lines;
}

export function CodeBox({ file, errors }: { file: ProposalFile; errors: CompileMessage[] }) {
  const lines = useMemo(() => {
    const l = highlight(file.path, file.text);
    // The line after a final line break is not a line of the file.
    if (l.length > 1 && l[l.length - 1].length === 0) l.pop();
    return l;
  }, [file.path, file.text]);
  const bad = new Set(errors.map((e) => e.line));
  const label = `${file.path}, ${lines.length} line${lines.length === 1 ? "" : "s"}`;
  // Each line is an inline block followed by its line break, so that the
  // text (copied, or read by a screen reader) is the file's, blank lines
  // included.
  const rows: ReactNode[] = [];
  lines.forEach((pieces, i) => {
    if (i > 0) rows.push("\n");
    rows.push(
      <span key={i} className={bad.has(i + 1) ? "code-line is-error" : "code-line"}>
        {pieces.map((pc, j) => (pc.cls ? <span key={j} className={pc.cls}>{pc.text}</span> : pc.text))}
      </span>,
    );
  });
  return (
    <figure className="code-file">
      <figcaption>
        <code className="code-path">{file.path}</code>
        <span className="code-size">{size(file.bytes || new TextEncoder().encode(file.text).length)}</span>
      </figcaption>
      <pre className="code-box" tabIndex={0} role="region" aria-label={label} data-path={file.path}>
        <code>{rows}</code>
      </pre>
    </figure>
  );
}

function size(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
