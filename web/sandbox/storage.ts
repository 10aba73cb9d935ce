import { useCallback, useEffect, useRef, useState } from "react";

// @app/storage for apps: each call goes over the port to the page that
// embeds this frame, which keeps the app instance's data in the person's
// browser and answers. Values are JSON.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

let port: MessagePort | null = null;
let next = 1;
const pending = new Map<number, Pending>();

// MaxKey is the longest key, in characters (the host refuses longer ones).
export const MaxKey = 256;

export function attach(p: MessagePort) {
  port = p;
}

// answer settles the call a storage-result message names.
export function answer(msg: { id?: unknown; ok?: unknown; value?: unknown; error?: unknown }) {
  if (typeof msg.id !== "number") return;
  const p = pending.get(msg.id);
  if (!p) return;
  pending.delete(msg.id);
  if (msg.ok === true) p.resolve(msg.value);
  else p.reject(new Error(typeof msg.error === "string" ? msg.error : "The storage call failed."));
}

function send(op: string, key?: string, value?: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (!port) {
      reject(new Error("Storage is not connected yet: call it from a component or an effect, not while the app loads."));
      return;
    }
    const id = next++;
    pending.set(id, { resolve, reject });
    port.postMessage({ type: "storage", id, op, key, value });
  });
}

function checkKey(key: unknown): string {
  if (typeof key !== "string" || key === "") throw new TypeError("storage: key must be a non-empty string.");
  if (key.length > MaxKey) throw new TypeError(`storage: key is ${key.length} characters long; keep it to ${MaxKey}.`);
  return key;
}

export const storage = {
  async get<T = Json>(key: string): Promise<T | undefined> {
    const text = await send("get", checkKey(key));
    if (typeof text !== "string") return undefined;
    return JSON.parse(text) as T;
  },
  async set(key: string, value: Json): Promise<void> {
    const k = checkKey(key);
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError("storage.set: the value must be JSON (not undefined or a function).");
    await send("set", k, text);
  },
  async remove(key: string): Promise<void> {
    await send("remove", checkKey(key));
  },
  async keys(): Promise<string[]> {
    const v = await send("keys");
    return Array.isArray(v) ? v.filter((k): k is string => typeof k === "string") : [];
  },
};

// useStoredState is useState whose value is kept in storage under key: it
// starts at initial, becomes the stored value once read, and each change
// is written.
export function useStoredState<T extends Json>(key: string, initial: T): [T, (v: T | ((old: T) => T)) => void, { loaded: boolean; error: string }] {
  const [value, setValue] = useState<T>(initial);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState("");
  const current = useRef(value);
  useEffect(() => {
    current.current = value;
  });
  const touched = useRef(false);
  useEffect(() => {
    let live = true;
    touched.current = false;
    storage.get<T>(key).then(
      (v) => {
        if (!live) return;
        if (v !== undefined && !touched.current) setValue(v);
        setLoaded(true);
      },
      (e: Error) => {
        if (!live) return;
        setError(e.message);
        setLoaded(true);
      },
    );
    return () => {
      live = false;
    };
  }, [key]);
  const set = useCallback(
    (v: T | ((old: T) => T)) => {
      const nv = typeof v === "function" ? (v as (old: T) => T)(current.current) : v;
      touched.current = true;
      current.current = nv;
      setValue(nv);
      storage.set(key, nv).then(
        () => setError(""),
        (e: Error) => setError(e.message),
      );
    },
    [key],
  );
  return [value, set, { loaded, error }];
}
