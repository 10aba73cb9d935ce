import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { highlightCode, classHighlighter } from "@lezer/highlight";
import { javascriptLanguage, jsxLanguage, tsxLanguage, typescriptLanguage } from "@codemirror/lang-javascript";
import { cssLanguage } from "@codemirror/lang-css";
import { ApiError, call } from "./api";
import { Link } from "./router";
import { Dialog, ErrorBox, Loading, when } from "./ui";
import "./approvals.css";

// Needs your approval: the apps agents proposed for the Rooms this person
// may decide on, each with every proposed file in full and its compile
// result, to approve into the Room's launcher or decline.

export type CompileMessage = { file: string; line: number; column: number; text: string; line_text: string };

export type Proposal = {
  proposal_id: string;
  room_id: string;
  room_name: string;
  name: string;
  kind: "snippet" | "repository" | string;
  status: string;
  proposed_by: { kind: string; id: string; name: string };
  proposed_at: string;
  file_count: number;
  compile: { ok: boolean; errors: CompileMessage[] | null } | null;
  repository?: { repository_id: string; name: string; version_id: string };
};

export type ProposalFile = { path: string; text: string; bytes: number };

export type ProposalDetail = Proposal & { files: ProposalFile[]; warnings?: CompileMessage[] | null };

export type Decision = { proposal_id: string; status: string; room_id: string; instance_id: string; version: number };

const proposalPath = (id: string) => "/api/proposals/" + encodeURIComponent(id);

// usePendingCount is how many proposals wait for this person's decision,
// live: the server's event stream, or a poll of the count when the stream
// cannot be opened. null until the first answer.
export function usePendingCount(): number | null {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    let source: EventSource | null = null;
    const poll = () => {
      call<{ pending: number }>("/api/proposals/count")
        .then((r) => {
          if (!stopped && typeof r?.pending === "number") setCount(r.pending);
        })
        .catch(() => {});
    };
    const startPolling = () => {
      if (timer !== undefined) return;
      poll();
      timer = window.setInterval(poll, 15000);
    };
    if (typeof EventSource === "function") {
      source = new EventSource("/api/proposals/events");
      source.addEventListener("count", (e) => {
        try {
          const d = JSON.parse((e as MessageEvent<string>).data);
          if (!stopped && typeof d?.pending === "number") setCount(d.pending);
        } catch {
          // A malformed event changes nothing.
        }
      });
      source.onerror = () => {
        // Closed: the stream is refused (not reconnecting), so poll.
        // Reconnecting: ask once meanwhile.
        if (source && source.readyState === EventSource.CLOSED) startPolling();
        else poll();
      };
    } else {
      startPolling();
    }
    return () => {
      stopped = true;
      source?.close();
      if (timer !== undefined) window.clearInterval(timer);
    };
  }, []);
  return count;
}

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

type Notice = { key: number; text: string; tone: "ok" | "info" };

export function ApprovalsPage({ pending }: { pending: number | null }) {
  const [list, setList] = useState<Proposal[] | null>(null);
  const [error, setError] = useState("");
  const [notices, setNotices] = useState<Notice[]>([]);
  const seq = useRef(0);
  const gone = useRef(new Set<string>());

  const load = useCallback((signal?: AbortSignal) => {
    call<{ proposals: Proposal[] | null }>("/api/proposals?status=pending", { signal })
      .then((r) => {
        setError("");
        setList((r.proposals ?? []).filter((p) => !gone.current.has(p.proposal_id)));
      })
      .catch((e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") return;
        setError(e instanceof Error ? e.message : String(e));
      });
  }, []);
  // The list is loaded at first and again whenever the pending count
  // changes: a new proposal appears as its card.
  useEffect(() => {
    const ac = new AbortController();
    load(ac.signal);
    return () => ac.abort();
  }, [load, pending]);

  const say = (text: string, tone: Notice["tone"]) => {
    const key = ++seq.current;
    setNotices((n) => [...n.slice(-2), { key, text, tone }]);
  };
  const remove = (id: string) => {
    gone.current.add(id);
    setList((l) => (l ?? []).filter((p) => p.proposal_id !== id));
  };

  return (
    <section className="page approvals" aria-labelledby="approvals-title">
      <div className="page-head">
        <h1 id="approvals-title">Needs your approval</h1>
      </div>
      <p className="lead">
        Apps that agents proposed for your Rooms. Nothing here runs anywhere until you approve it: review every file, then approve it into the
        Room's app launcher or decline it.
      </p>
      <div className="approval-notices" role="status" aria-live="polite">
        {notices.map((n) => (
          <div key={n.key} className={"notice approval-notice is-" + n.tone}>
            <p>{n.text}</p>
            <button type="button" className="ghost small" onClick={() => setNotices((all) => all.filter((x) => x.key !== n.key))} aria-label="Dismiss this message">
              Dismiss
            </button>
          </div>
        ))}
      </div>
      {error ? <ErrorBox text={error} onRetry={() => load()} /> : null}
      {!error && list === null ? <Loading what="Loading proposals…" /> : null}
      {list !== null && list.length === 0 ? (
        <div className="empty" id="approvals-empty">
          <h2>Nothing needs your approval</h2>
          <p>
            When an agent proposes an app for a Room you own, it waits here for you to review its files and approve or decline it. Until then it
            reaches no launcher and runs nowhere.
          </p>
          <Link to="/connected" className="button secondary">
            See what is connected
          </Link>
        </div>
      ) : null}
      {list !== null && list.length > 0 ? (
        <ul className="proposals" aria-label="Pending proposals">
          {list.map((p) => (
            <li key={p.proposal_id}>
              <ProposalCard
                p={p}
                onDecided={(d, how) => {
                  remove(p.proposal_id);
                  say(
                    how === "approve"
                      ? `“${p.name}” is approved: it is in the app launcher of ${p.room_name || "its Room"}.`
                      : `“${p.name}” is declined: it will not reach ${p.room_name || "the Room"}'s launcher.`,
                    "ok",
                  );
                  void d;
                }}
                onGone={(text) => {
                  remove(p.proposal_id);
                  say(text, "info");
                }}
              />
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function byWhom(p: Proposal): string {
  const n = p.proposed_by?.name;
  if (n) return n;
  return p.proposed_by?.kind === "person" ? "a person" : "an agent";
}

function ProposalCard({ p, onDecided, onGone }: { p: Proposal; onDecided: (d: Decision, how: "approve" | "decline") => void; onGone: (text: string) => void }) {
  const [open, setOpen] = useState(false);
  const [detail, setDetail] = useState<ProposalDetail | null>(null);
  const [detailError, setDetailError] = useState("");
  const [busy, setBusy] = useState<"" | "approve" | "decline">("");
  const [error, setError] = useState("");
  const [confirming, setConfirming] = useState(false);
  const id = p.proposal_id;
  const dom = "p-" + id.replace(/[^A-Za-z0-9_-]/g, "_");
  const repo = p.kind === "repository";

  const loadDetail = useCallback(() => {
    setDetailError("");
    call<ProposalDetail>(proposalPath(id))
      .then((d) => setDetail({ ...d, files: d.files ?? [] }))
      .catch((e: unknown) => setDetailError(e instanceof Error ? e.message : String(e)));
  }, [id]);
  useEffect(() => {
    if (open && detail === null && !detailError) loadDetail();
  }, [open, detail, detailError, loadDetail]);

  const decide = (how: "approve" | "decline") => {
    setBusy(how);
    setError("");
    call<Decision>(proposalPath(id) + "/" + how, { method: "POST" })
      .then((d) => onDecided(d, how))
      .catch((e: unknown) => {
        const msg = e instanceof Error ? e.message : String(e);
        if (e instanceof ApiError && e.status === 409) {
          onGone(/already/i.test(msg) ? `“${p.name}”: ${msg}` : `“${p.name}” was already decided by someone else: ${msg}`);
          return;
        }
        if (e instanceof ApiError && e.status === 404) {
          onGone(`“${p.name}” is no longer waiting for a decision: it was removed.`);
          return;
        }
        if (e instanceof ApiError && e.status === 403) {
          setError(`You cannot decide on this proposal: only the owner of ${p.room_name || "its Room"} or a workspace owner can. (${msg})`);
        } else {
          setError(msg);
        }
        setBusy("");
      })
      .finally(() => setConfirming(false));
  };

  const errors = p.compile?.errors ?? [];
  return (
    <article className="proposal-card" aria-labelledby={dom + "-name"} id={dom}>
      <header className="proposal-head">
        <div className="proposal-title">
          <h2 id={dom + "-name"}>{p.name}</h2>
          <span className="proposal-kind">{repo ? "Repository app" : "Snippet app"}</span>
        </div>
        <p className="proposal-meta">
          Proposed by <strong>{byWhom(p)}</strong> for the Room <strong>{p.room_name || p.room_id}</strong>
          {p.proposed_at ? (
            <>
              {" · "}
              <time dateTime={p.proposed_at} title={new Date(p.proposed_at).toLocaleString()}>
                {when(p.proposed_at)}
              </time>
            </>
          ) : null}
        </p>
      </header>

      {repo ? (
        <div className="proposal-repo">
          <p>
            Repository <strong>{p.repository?.name || p.repository?.repository_id || "—"}</strong>
            {p.repository?.version_id ? (
              <>
                , pinned version <code>{p.repository.version_id}</code>
              </>
            ) : null}
            . This path does not build or deploy a bundle.
          </p>
        </div>
      ) : null}

      <details
        className="proposal-files"
        onToggle={(e) => {
          setOpen((e.currentTarget as HTMLDetailsElement).open);
        }}
      >
        <summary>{repo ? "Review repository code before approving" : `Review all proposed files (${p.file_count})`}</summary>
        {open ? (
          <div className="proposal-files-body">
            {detailError ? <ErrorBox text={detailError} onRetry={loadDetail} /> : null}
            {!detailError && detail === null ? <Loading what="Loading the files…" /> : null}
            {detail !== null && detail.files.length === 0 ? <p className="muted">There are no files to show.</p> : null}
            {detail?.files.map((f) => (
              <CodeBox key={f.path} file={f} errors={errors.filter((m) => m.file === f.path)} />
            ))}
          </div>
        ) : null}
      </details>

      <Compile p={p} warnings={detail?.warnings ?? []} />

      <p className="proposal-warning">Approval makes this code available in the Room app launcher. Review the files before approving.</p>
      {error ? <ErrorBox text={error} /> : null}
      <div className="proposal-actions">
        <button type="button" className="primary" onClick={() => decide("approve")} disabled={busy !== ""} aria-describedby={dom + "-name"}>
          {busy === "approve" ? "Approving…" : "Approve and create"}
        </button>
        <button type="button" className="secondary" onClick={() => setConfirming(true)} disabled={busy !== ""} aria-describedby={dom + "-name"}>
          {busy === "decline" ? "Declining…" : "Decline"}
        </button>
      </div>
      <Dialog id={dom + "-decline"} open={confirming} title="Decline this proposal?" onClose={() => setConfirming(false)}>
        <p>
          “{p.name}” will not reach the launcher of {p.room_name || "the Room"}. {byWhom(p)} can propose it again.
        </p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setConfirming(false)} disabled={busy !== ""} autoFocus>
            Cancel
          </button>
          <button type="button" className="danger" onClick={() => decide("decline")} disabled={busy !== ""}>
            {busy === "decline" ? "Declining…" : "Decline"}
          </button>
        </div>
      </Dialog>
    </article>
  );
}

// Compile is the compile result, shown before the buttons.
function Compile({ p, warnings }: { p: Proposal; warnings: CompileMessage[] }) {
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
    </div>
  );
}

function Messages({ list }: { list: CompileMessage[] }) {
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

function CodeBox({ file, errors }: { file: ProposalFile; errors: CompileMessage[] }) {
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
