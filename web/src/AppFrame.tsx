import { useEffect, useRef } from "react";
import { useQuery } from "@tanstack/react-query";
import { errorText, queries, type CompileMessage } from "./api";
import { ErrorBox, Loading } from "./ui";
import "./rooms.css";

// AppFrame runs one approved app of a Room in the sandbox page: an
// <iframe sandbox="allow-scripts"> (never allow-same-origin, so the frame
// has an opaque origin and reaches nothing of this page), handed its code
// over a fresh MessageChannel each time the frame loads. The frame's
// storage calls come back over that port alone and are answered here, with
// the data kept in this browser under the Room and the app instance.

export const SandboxPath = "/sandbox/app";

// Quota is what one app instance may keep in this browser, in bytes
// (UTF-16 code units of its keys and values, as localStorage counts).
export const Quota = 1 << 20;
export const MaxKey = 256;
export const MaxKeys = 1024;
// MaxRate is how many storage calls a second one app may make; past it
// they are refused, and an app that keeps flooding loses its port.
export const MaxRate = 500;

export function AppFrame(props: { roomId: string; instanceId: string; name: string }) {
  const { roomId, instanceId, name } = props;
  const frame = useRef<HTMLIFrameElement>(null);
  // A rename titles the next load; the running app is not reloaded for it.
  const nameRef = useRef(name);
  useEffect(() => {
    nameRef.current = name;
  });

  // The bundle is read each time the app opens (nothing of it is kept).
  const q = useQuery(queries.bundle(roomId, instanceId));
  const b = q.data;
  const shaped = b !== undefined && typeof b?.js === "string" && typeof b?.css === "string";
  const error = q.isError ? errorText(q.error) : b !== undefined && !shaped ? "The app's bundle is not in the expected shape; try again." : "";
  const broken = b && shaped && (b.ok === false || b.js === "") ? (Array.isArray(b.errors) ? b.errors : []) : null;
  const bundle = b && shaped && !broken ? b : null;

  useEffect(() => {
    const el = frame.current;
    if (!el || !bundle) return;
    let port: MessagePort | null = null;
    const store = new AppStore(roomId, instanceId);
    const connect = () => {
      port?.close();
      const win = el.contentWindow;
      if (!win) return;
      const ch = new MessageChannel();
      port = ch.port1;
      const mine = port;
      let second = 0;
      let calls = 0;
      mine.onmessage = (ev) => {
        if (mine !== port) return;
        const now = Math.floor(performance.now() / 1000);
        if (now !== second) {
          second = now;
          calls = 0;
        }
        calls++;
        if (calls > MaxRate * 10) {
          mine.close();
          return;
        }
        const reply = calls > MaxRate ? store.refuse(ev.data, `storage: more than ${MaxRate} calls in a second; slow down.`) : store.handle(ev.data);
        if (reply) mine.postMessage(reply);
      };
      // The frame's origin is opaque ("null"): "*" is the only target
      // that reaches it. What goes is a port and this app's own code.
      win.postMessage({ type: "foundry:connect" }, "*", [ch.port2]);
      mine.postMessage({ type: "load", js: bundle.js, css: bundle.css, name: nameRef.current });
    };
    el.addEventListener("load", connect);
    // The frame's address is set only now, so its first load comes after
    // the listener is there.
    el.src = SandboxPath;
    return () => {
      el.removeEventListener("load", connect);
      port?.close();
      port = null;
    };
  }, [bundle, roomId, instanceId]);

  if (error) return <ErrorBox text={error} onRetry={() => void q.refetch()} />;
  if (broken) return <CompileErrors name={name} errors={broken} />;
  return (
    <div className="app-frame-wrap">
      {!bundle ? <Loading what={`Loading ${name}…`} /> : null}
      <iframe
        ref={frame}
        className="app-frame"
        sandbox="allow-scripts"
        title={`App: ${name}`}
        referrerPolicy="no-referrer"
        allow="camera 'none'; microphone 'none'; geolocation 'none'; display-capture 'none'; usb 'none'; serial 'none'; hid 'none'; bluetooth 'none'; payment 'none'; clipboard-read 'none'; clipboard-write 'none'; fullscreen 'none'"
        hidden={!bundle}
        data-instance-id={instanceId}
      />
    </div>
  );
}

type Reply = { type: "storage-result"; id: number; ok: boolean; value?: unknown; error?: string };

// AppStore keeps one app instance's data in this browser's localStorage,
// each key under a prefix naming the Room and the instance, and answers
// the frame's storage calls, each checked first: the frame is untrusted.
export class AppStore {
  prefix: string;
  constructor(room: string, instance: string) {
    this.prefix = "foundry.app:" + encodeURIComponent(room) + ":" + encodeURIComponent(instance) + ":";
  }

  // refuse answers a storage call with an error, unread.
  refuse(msg: unknown, error: string): Reply | null {
    const id = msg && typeof msg === "object" ? (msg as Record<string, unknown>).id : undefined;
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) return null;
    return { type: "storage-result", id, ok: false, error };
  }

  handle(msg: unknown): Reply | null {
    if (!msg || typeof msg !== "object") return null;
    const m = msg as Record<string, unknown>;
    if (m.type !== "storage") return null;
    const id = m.id;
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) return null;
    const fail = (error: string): Reply => ({ type: "storage-result", id, ok: false, error });
    const op = m.op;
    if (op === "keys") return { type: "storage-result", id, ok: true, value: this.keys() };
    if (op !== "get" && op !== "set" && op !== "remove") return fail(`storage: there is no call named ${JSON.stringify(String(op)).slice(0, 40)}; use get, set, remove or keys.`);
    const key = m.key;
    if (typeof key !== "string" || key === "") return fail("storage: key must be a non-empty string.");
    if (key.length > MaxKey) return fail(`storage: key is ${key.length} characters long; keep it to ${MaxKey}.`);
    try {
      if (op === "get") {
        const v = localStorage.getItem(this.prefix + key);
        return { type: "storage-result", id, ok: true, value: v ?? undefined };
      }
      if (op === "remove") {
        localStorage.removeItem(this.prefix + key);
        return { type: "storage-result", id, ok: true };
      }
      const value = m.value;
      if (typeof value !== "string") return fail("storage.set: value must be JSON.");
      if (value.length > Quota) return fail(`storage.set: the value is ${value.length} characters; this app may keep ${Quota} in all (1 MiB).`);
      try {
        JSON.parse(value);
      } catch {
        return fail("storage.set: value must be JSON.");
      }
      const old = localStorage.getItem(this.prefix + key);
      const keys = this.keys();
      if (old === null && keys.length >= MaxKeys) {
        return fail(`storage quota exceeded: this app keeps ${keys.length} keys, the most it may (${MaxKeys}). Remove keys it no longer needs.`);
      }
      const used = this.used(keys) - (old === null ? 0 : key.length + old.length);
      if (used + key.length + value.length > Quota) {
        return fail(`storage quota exceeded: this app keeps ${used} of its ${Quota} (1 MiB) in this browser, and ${JSON.stringify(key)} needs ${key.length + value.length} more. Remove keys it no longer needs.`);
      }
      localStorage.setItem(this.prefix + key, value);
      return { type: "storage-result", id, ok: true };
    } catch (e) {
      return fail("storage: this browser refused (" + (e instanceof Error ? e.message : String(e)) + ").");
    }
  }

  keys(): string[] {
    const out: string[] = [];
    for (let i = 0; i < localStorage.length; i++) {
      const k = localStorage.key(i);
      if (k && k.startsWith(this.prefix)) out.push(k.slice(this.prefix.length));
    }
    return out.sort();
  }

  used(keys = this.keys()): number {
    let n = 0;
    for (const k of keys) n += k.length + (localStorage.getItem(this.prefix + k)?.length ?? 0);
    return n;
  }
}

// CompileErrors is what an approved snippet that does not compile shows in
// place of its frame: nothing of it runs.
function CompileErrors(props: { name: string; errors: CompileMessage[] }) {
  const { name, errors } = props;
  return (
    <div className="app-compile" role="alert">
      <h2>{name} does not compile</h2>
      <p>Nothing of it runs. Ask the agent to fix these errors and propose it again.</p>
      {errors.length === 0 ? (
        <p className="app-compile-none">The compiler gave no details.</p>
      ) : (
        <ul className="app-compile-errors">
          {errors.map((m, i) => (
            <li key={i}>
              <code className="app-compile-at">
                {(m.file || "?") + (m.line ? ":" + m.line + (m.column !== undefined ? ":" + m.column : "") : "")}
              </code>{" "}
              <span className="app-compile-text">{m.text || ""}</span>
              {m.line_text ? <pre className="app-compile-line">{m.line_text}</pre> : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
