// The one door to the server: JSON under /api/, the session cookie, and
// the session's CSRF token on every mutating call.

export type Me = {
  user: { id: string; email: string; name: string; role: string };
  workspace: { id: string; name: string };
  csrf_token: string;
};

export type Note = {
  id: string;
  title: string;
  approved: boolean;
  version: string | number;
  updated_at?: string;
};

export type NotesPage = { notes: Note[]; next_cursor?: string | null };

export type Connection = {
  id: string;
  kind: string;
  name: string;
  client_host?: string;
  user: { id: string; email: string };
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked: boolean;
};

// ApiError is a refused or failed call: the problem's detail is what the
// page shows.
export class ApiError extends Error {
  status: number;
  field?: string;
  currentVersion?: string | number;
  // changes: on a 412, the versions written since the one the change was
  // based on, with who wrote each.
  changes: Change[];
  constructor(status: number, message: string, field?: string, currentVersion?: string | number, changes?: Change[]) {
    super(message);
    this.status = status;
    this.field = field;
    this.currentVersion = currentVersion;
    this.changes = Array.isArray(changes) ? changes : [];
  }
}

export type Change = { version: number; who?: { kind?: string; name?: string }; at?: string; changed?: string[] };

// writers names who wrote the changes, each once: "Claude and you".
export function writers(changes: Change[], me: string): string {
  const names: string[] = [];
  for (const c of changes) {
    let n = c.who?.name || (c.who?.kind === "person" ? "a person" : "an agent");
    if (n === me) n = "you, elsewhere";
    if (!names.includes(n)) names.push(n);
  }
  if (names.length <= 1) return names[0] ?? "";
  return names.slice(0, -1).join(", ") + " and " + names[names.length - 1];
}

let csrf = "";

export function setCSRF(token: string) {
  csrf = token;
}
export const getCSRF = (): string => csrf;

// signInPath is where a signed-out visit goes, coming back here after.
export function signInPath(): string {
  const here = location.pathname + location.search;
  return here === "/" ? "/signin" : "/signin?next=" + encodeURIComponent(here);
}

type Options = { method?: string; body?: unknown; ifMatch?: string | number; signal?: AbortSignal; idempotencyKey?: string };

export async function call<T>(path: string, opts: Options = {}): Promise<T> {
  const method = opts.method ?? "GET";
  const headers: Record<string, string> = { Accept: "application/json, application/problem+json" };
  if (method !== "GET" && method !== "HEAD") headers["X-CSRF-Token"] = csrf;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  if (opts.ifMatch !== undefined) headers["If-Match"] = `"${opts.ifMatch}"`;
  if (opts.idempotencyKey) headers["Idempotency-Key"] = opts.idempotencyKey;
  let resp: Response;
  try {
    resp = await fetch(path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: "same-origin",
      signal: opts.signal,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e;
    throw new ApiError(0, "Foundry cannot be reached: check the connection and try again.");
  }
  if (resp.status === 401) {
    location.assign(signInPath());
    throw new ApiError(401, "You are signed out: sign in again.");
  }
  if (resp.status === 204) return undefined as T;
  const text = await resp.text();
  let data: any = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!resp.ok) {
    throw new ApiError(resp.status, problemText(resp.status, data), data?.field, data?.current_version, data?.changes);
  }
  if (data === undefined) throw new ApiError(resp.status, "Foundry answered something that is not JSON; try again.");
  return data as T;
}

// problemText is the sentence to show for a refused call: the problem's
// detail (RFC 9457), or Foundry's older message field.
export function problemText(status: number, data: any): string {
  let text = data?.detail || data?.message || data?.title;
  if (typeof text === "string" && text !== "") {
    // A detail about a field reads after its name: "title is required: …".
    const field = typeof data?.field === "string" ? data.field : "";
    if (field && /^(is|are|was|must|has|have|cannot|can|does|do|should|takes|names|contains|needs)\b/.test(text)) {
      text = field.replace(/_/g, " ") + " " + text;
    }
    return text.charAt(0).toUpperCase() + text.slice(1);
  }
  if (status === 404) return "This was not found: it may have been deleted.";
  if (status >= 500) return "Something went wrong on the server; try again in a moment.";
  return `The server refused this (HTTP ${status}).`;
}

export type TabRef = { tab_id: string; type: string; label: string; position: number };

export type NoteView = { id: string; title: string; approved: boolean; version: number; tabs: TabRef[] };

export type Slide = { slide_id: string; title: string; body: string; notes: string; layout?: string; theme?: string };
export type Sheet = { sheet_id: string; name: string; cells: unknown[][] };
export type Source = { source_id: string; title: string; url: string; normalized_url: string; added_at: string };
export type NoteFile = { file_id: string; name: string; content_type: string; size_bytes: number; sha256: string; added_at: string };

// TabContent is GET /api/notes/{id}/tabs/{tab_id}: one tab's data, by its type.
export type TabContent = {
  note_id: string;
  version: number;
  tab_id: string;
  type: string;
  label: string;
  text?: string;
  slides?: Slide[];
  sheets?: Sheet[];
  sources?: Source[];
  files?: NoteFile[];
};

export type WriteResult = { id: string; version: number; changed_tab_ids: string[] };

const notePath = (id: string) => "/api/notes/" + encodeURIComponent(id);

export const api = {
  me: () => call<Me>("/api/me"),
  notes: (query: string, cursor: string, signal?: AbortSignal) => {
    const q = new URLSearchParams();
    if (query) q.set("query", query);
    if (cursor) q.set("cursor", cursor);
    q.set("limit", "50");
    return call<NotesPage>("/api/notes?" + q.toString(), { signal });
  },
  createNote: (title: string) => call<Note>("/api/notes", { method: "POST", body: { title } }),
  patchNote: (n: Note, change: { title?: string; approved?: boolean }) =>
    call<Note>("/api/notes/" + encodeURIComponent(n.id), { method: "PATCH", body: change, ifMatch: n.version }),
  deleteNote: (n: Note) => call<void>("/api/notes/" + encodeURIComponent(n.id), { method: "DELETE", ifMatch: n.version }),
  note: (id: string, signal?: AbortSignal) => call<NoteView>(notePath(id), { signal }),
  tab: (id: string, tab: string, signal?: AbortSignal) => call<TabContent>(notePath(id) + "/tabs/" + encodeURIComponent(tab), { signal }),
  // setText replaces a markdown tab's text, based on version; key names
  // this attempt, so that a retry of it is answered once.
  setText: (id: string, tab: string, text: string, version: number, key: string) =>
    call<WriteResult>(notePath(id) + "/tabs/" + encodeURIComponent(tab) + "/text", { method: "PUT", body: { text }, ifMatch: version, idempotencyKey: key }),
  connections: () => call<{ connections: Connection[] }>("/api/connections"),
  revoke: (id: string) => call<void>("/api/connections/" + encodeURIComponent(id), { method: "DELETE" }),
};
