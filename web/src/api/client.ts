import createClient, { createFinalURL, createQuerySerializer, defaultPathSerializer, type Middleware } from "openapi-fetch";
import type { paths } from "./schema";
import type { Guard, Problem, Route, VersionEntry, Written } from "./types";

// The one door to the server: openapi-fetch's client, typed by the paths
// of the OpenAPI document (schema.d.ts), so that a call names its route as
// the document does ("/api/notes/{note_id}/tabs/{tab_id}") and its path
// and query parameters, headers, body and answer are the document's. JSON
// under /api/, the session cookie, and the session's CSRF token on every
// mutating call (the session middleware); endpoints.ts makes each call and
// answer() turns what came back into its data or an ApiError.

// ApiError is a refused or failed call: the problem's detail is what the
// page shows. status 0: the server was not reached.
export class ApiError extends Error {
  status: number;
  field?: string;
  currentVersion?: number;
  // changes: on a 412, the versions written since the one the change was
  // based on, with who wrote each.
  changes: VersionEntry[];
  constructor(status: number, message: string, field?: string, currentVersion?: number, changes?: VersionEntry[]) {
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

// csrfToken is the token setCSRF was given (for a call made without client).
export function csrfToken(): string {
  return csrf;
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

// guard is a Precondition as the headers the document gives a write.
export function guard(pre: Precondition): Guard {
  return pre.key ? { "If-Match": `"${pre.version}"`, "Idempotency-Key": pre.key } : { "If-Match": `"${pre.version}"` };
}

const notJSON = "Foundry answered something that is not JSON; try again.";

// session is what every call carries and what every answer may say: the
// CSRF token on a mutating call, and a 401 sends the page to sign in.
const session: Middleware = {
  onRequest({ request }) {
    request.headers.set("Accept", "application/json, application/problem+json");
    if (request.method !== "GET" && request.method !== "HEAD") request.headers.set("X-CSRF-Token", csrf);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) location.assign(signInPath());
    // An answer that is not Foundry's JSON (a proxy's page) is refused
    // here, before openapi-fetch reads it as JSON.
    if (response.ok && response.status !== 204 && !/json/i.test(response.headers.get("Content-Type") ?? "")) {
      throw new ApiError(response.status, notJSON);
    }
    return undefined;
  },
};

// client calls the API. Its fetch is the page's fetch at the time of the
// call.
export const client = createClient<paths>({ credentials: "same-origin", fetch: (r) => fetch(r) });
client.use(session);

// Sent is what one of client's calls answers.
type Sent<T> = { data?: T; error?: unknown; response: Response };

// sent waits for a call; a network failure is an ApiError with status 0
// (an aborted call stays an AbortError).
async function sent<T>(call: Promise<Sent<T>>): Promise<Sent<T>> {
  try {
    return await call;
  } catch (e) {
    if (isAbort(e) || e instanceof ApiError) throw e;
    if (e instanceof SyntaxError) throw new ApiError(0, notJSON); // cut off mid-answer
    throw new ApiError(0, "Foundry cannot be reached: check the connection and try again.");
  }
}

// answer is a call's JSON answer, or the ApiError it was refused with.
export async function answer<T>(call: Promise<Sent<T>>): Promise<T> {
  const r = await sent(call);
  if (!r.response.ok) throw refused(r.response.status, r.error);
  if (r.data === undefined) throw new ApiError(r.response.status, notJSON);
  return r.data;
}

// written is a write's answer that may have no body (204): the version its
// ETag names, if any.
export async function written(call: Promise<Sent<unknown>>): Promise<Written | undefined> {
  const r = await sent(call);
  if (!r.response.ok) throw refused(r.response.status, r.error);
  const v = Number((r.response.headers.get("ETag") ?? "").replace(/^W\//, "").replace(/"/g, ""));
  return Number.isFinite(v) && v > 0 ? { version: v } : undefined;
}

export function refused(status: number, data: unknown): ApiError {
  if (status === 401) return new ApiError(401, "You are signed out: sign in again.");
  // A refusal that is not a problem document (a proxy's) has none of its
  // members.
  const p: Partial<Problem> = data && typeof data === "object" ? data : {};
  return new ApiError(status, problemText(status, p), p.field, p.current_version, p.changes);
}

// url is a route's address with its path and query parameters filled in,
// for what is not a call: a link, an EventSource.
export function url<R extends Route>(route: R, params: Params<R>): string {
  return createFinalURL(route, { baseUrl: "", params, querySerializer: createQuerySerializer(), pathSerializer: defaultPathSerializer });
}

type Params<R extends Route> = paths[R] extends { get: { parameters: infer P extends { path?: unknown; query?: unknown } } }
  ? { path?: P["path"] & Record<string, unknown>; query?: P["query"] & Record<string, unknown> }
  : never;

// rawUpload is a fetch for one call that sends body as the request's raw
// bytes with XMLHttpRequest, whose upload progress fetch does not give;
// the call's headers are the ones openapi-fetch and the session middleware
// set.
export function rawUpload(body: Blob, progress: (loaded: number) => void): (req: Request) => Promise<Response> {
  return (req) =>
    new Promise((resolve, reject) => {
      const x = new XMLHttpRequest();
      x.open(req.method, req.url);
      req.headers.forEach((v, k) => x.setRequestHeader(k, v));
      x.upload.onprogress = (e) => progress(e.loaded);
      const cut = () => reject(new ApiError(0, "The upload was cut off: check the connection and try again."));
      x.onload = () => {
        if (x.status === 0) return cut();
        const headers = new Headers();
        for (const line of x.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
          const i = line.indexOf(":");
          if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
        }
        const empty = x.status === 204 || x.status === 205 || x.status === 304;
        resolve(new Response(empty ? null : x.responseText, { status: x.status, statusText: x.statusText, headers }));
      };
      x.onerror = cut;
      x.onabort = cut;
      x.send(body);
    });
}

// problemText is the sentence to show for a refused call: the problem's
// detail (RFC 9457), or Foundry's older message field.
export function problemText(status: number, data: Partial<Problem> | undefined): string {
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
