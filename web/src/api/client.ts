import type { Change, Problem, Written } from "./types";

// The one door to the server: JSON under /api/, the session cookie, and
// the session's CSRF token on every mutating call. A call names its route
// as the OpenAPI document does ("/api/notes/{id}/tabs/{tab_id}") with
// params.path and params.query, as openapi-fetch's client.GET/POST do, so
// that a generated client can take this one's place behind endpoints.ts:
// createClient<paths>({ credentials: "same-origin" }) with a middleware
// that adds X-CSRF-Token and sends a 401 to the sign-in page, and request()
// calling client[method](route, { params, body, headers: the
// precondition's, signal }) and throwing ApiError from its error. The
// components, which call endpoints.ts, do not change.

// ApiError is a refused or failed call: the problem's detail is what the
// page shows. status 0: the server was not reached.
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

// unreachable is whether e says the server was not reached or could not
// answer now (worth the same attempt again later).
export function unreachable(e: unknown): e is ApiError {
  return e instanceof ApiError && (e.status === 0 || e.status === 429 || e.status >= 500);
}

export function isAbort(e: unknown): boolean {
  return e instanceof DOMException && e.name === "AbortError";
}

// errorText is what the page says for a failed call.
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

let csrf = "";

export function setCSRF(token: string) {
  csrf = token;
}

// signInPath is where a signed-out visit goes, coming back here after.
export function signInPath(): string {
  const here = location.pathname + location.search;
  return here === "/" ? "/signin" : "/signin?next=" + encodeURIComponent(here);
}

// Precondition is what a guarded write carries: the Note's version it was
// based on (If-Match) and the key that names this attempt of the change
// (Idempotency-Key), so that a resend after a lost answer is answered once.
export type Precondition = { version: number | string; key?: string };

export type Params = {
  path?: Record<string, string | number>;
  query?: Record<string, string | number | undefined>;
};

type Options = { params?: Params; body?: unknown; pre?: Precondition; signal?: AbortSignal };

// url fills a route's {names} from params.path and adds params.query.
export function url(route: string, params?: Params): string {
  const path = route.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const v = params?.path?.[name];
    if (v === undefined) throw new Error(`${route}: no value for {${name}}`);
    return encodeURIComponent(String(v));
  });
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params?.query ?? {})) if (v !== undefined && v !== "") q.set(k, String(v));
  const qs = q.toString();
  return qs ? path + "?" + qs : path;
}

const accept = "application/json, application/problem+json";

function headers(method: string, pre?: Precondition): Record<string, string> {
  const h: Record<string, string> = { Accept: accept };
  if (method !== "GET" && method !== "HEAD") h["X-CSRF-Token"] = csrf;
  if (pre) h["If-Match"] = `"${pre.version}"`;
  if (pre?.key) h["Idempotency-Key"] = pre.key;
  return h;
}

// versionOf is the Note version an answer's ETag names (a 204 has no body).
function versionOf(r: { headers: { get(name: string): string | null } }): number | undefined {
  const v = Number((r.headers.get("ETag") ?? "").replace(/^W\//, "").replace(/"/g, ""));
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function refused(status: number, data: unknown): ApiError {
  const p = (data && typeof data === "object" ? data : {}) as Problem;
  return new ApiError(status, problemText(status, p), p.field, p.current_version, p.changes);
}

// request sends one call and answers its JSON; a 204 answers the version
// its ETag names, if any.
export async function request<T>(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", route: string, opts: Options = {}): Promise<T> {
  const h = headers(method, opts.pre);
  if (opts.body !== undefined) h["Content-Type"] = "application/json";
  let resp: Response;
  try {
    resp = await fetch(url(route, opts.params), {
      method,
      headers: h,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: "same-origin",
      signal: opts.signal,
    });
  } catch (e) {
    if (isAbort(e)) throw e;
    throw new ApiError(0, "Foundry cannot be reached: check the connection and try again.");
  }
  if (resp.status === 401) {
    location.assign(signInPath());
    throw new ApiError(401, "You are signed out: sign in again.");
  }
  if (resp.status === 204) {
    const version = versionOf(resp);
    return (version === undefined ? undefined : ({ version } satisfies Written)) as T;
  }
  const data = parse(await resp.text());
  if (!resp.ok) throw refused(resp.status, data);
  if (data === undefined) throw new ApiError(resp.status, "Foundry answered something that is not JSON; try again.");
  return data as T;
}

// upload sends a file as the raw body of a POST, with XMLHttpRequest,
// whose upload progress fetch does not give.
export function upload<T>(route: string, params: Params, file: File, pre: Precondition, progress: (loaded: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open("POST", url(route, params));
    for (const [k, v] of Object.entries(headers("POST", pre))) x.setRequestHeader(k, v);
    x.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    x.upload.onprogress = (e) => progress(e.loaded);
    const cut = () => reject(new ApiError(0, "The upload was cut off: check the connection and try again."));
    x.onload = () => {
      if (x.status === 401) location.assign(signInPath());
      const data = parse(x.responseText);
      if (x.status >= 200 && x.status < 300 && data !== undefined) resolve(data as T);
      else if (x.status === 0) cut();
      else reject(refused(x.status, data));
    };
    x.onerror = cut;
    x.onabort = cut;
    x.send(file);
  });
}

// problemText is the sentence to show for a refused call: the problem's
// detail (RFC 9457), or Foundry's older message field.
export function problemText(status: number, data: Problem | undefined): string {
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
