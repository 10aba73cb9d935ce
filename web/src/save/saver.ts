import { ApiError, unreachable, type Precondition } from "../api";
import { conflictOf, type Conflict } from "./conflict";

// The one save path of the Note page: every write of every tab kind, and of
// the tab strip and the history, goes through a Saver. It sends one write
// at a time, in order, each guarded by the Note's version it is based on
// (If-Match) and an Idempotency-Key that names the attempt: a resend
// after a lost answer or an unreachable server carries the same key, so
// the server answers it once; a send on another version is a new attempt
// with a new key (the spec's "write with the new version and a new
// idempotency key"). A refusal because the Note moved on (412) is handed
// to the change's own conflict handler, which says whether to send it
// again on the version the server has now or to stop there.

export type Verdict = "again" | "stop";

export type Intent<T> = {
  send: (pre: Precondition) => Promise<T>;
  // version is what the change is based on, read at each attempt; by
  // default the newest version this path has seen.
  version?: () => number;
  // conflict decides what a 412 means for this change. Without it, the
  // change stops and run answers the conflict.
  conflict?: (c: Conflict) => Verdict | Promise<Verdict>;
  // maxConflicts bounds how often conflict may answer "again".
  maxConflicts?: number;
  // retrying says that the server could not be reached (or could not
  // answer now) and the same attempt goes again in a moment.
  retrying?: (e: ApiError) => void;
};

export type Outcome<T> = { ok: true; value: T } | { ok: false; conflict: Conflict } | { ok: false; error: unknown };

export type SaverHooks = {
  onVersion?: (v: number) => void; // a version this path learned of
  onBusy?: (writes: number) => void; // writes queued or under way
  onRetrying?: (e: ApiError | null) => void; // a write waits to go again (null: none)
};

export const RETRY_MS = 4000;

export function newKey(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export class Saver {
  version: number;
  hooks: SaverHooks;
  retryMs = RETRY_MS;
  private chain: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(version: number, hooks: SaverHooks = {}) {
    this.version = version;
    this.hooks = hooks;
  }

  // listen sets who hears what this path does.
  listen(hooks: SaverHooks) {
    this.hooks = hooks;
  }

  // seen moves the version this path writes on forward to v.
  seen(v: number | undefined) {
    if (v === undefined || !Number.isFinite(v) || v <= this.version) return;
    this.version = v;
    this.hooks.onVersion?.(v);
  }

  // rebase sets the version this path writes on (a read of the tab that
  // the next change is based on).
  rebase(v: number) {
    this.version = v;
    this.hooks.onVersion?.(v);
  }

  get busy(): number {
    return this.queued;
  }

  // retryNow sends a write that waits to go again at once.
  retryNow() {
    this.wake?.();
  }

  // close stops retrying: a write waiting to go again answers its error.
  // What is under way is still answered.
  close() {
    this.closed = true;
    this.wake?.();
  }

  // reopen undoes close (a view mounted again).
  reopen() {
    this.closed = false;
  }

  // run queues a change behind those before it and answers its outcome.
  run<T>(intent: Intent<T>): Promise<Outcome<T>> {
    this.queued++;
    this.hooks.onBusy?.(this.queued);
    const out = this.chain.then(() => this.attempt(intent));
    this.chain = out.catch(() => undefined);
    return out.finally(() => {
      this.queued--;
      this.hooks.onBusy?.(this.queued);
    });
  }

  private async attempt<T>(intent: Intent<T>): Promise<Outcome<T>> {
    let key = "";
    let keyVersion = -1;
    let conflicts = 0;
    for (;;) {
      const version = intent.version ? intent.version() : this.version;
      if (version !== keyVersion) {
        key = newKey();
        keyVersion = version;
      }
      try {
        const value = await intent.send({ version, key });
        const v = (value as { version?: unknown } | undefined)?.version;
        if (typeof v === "number") this.seen(v);
        this.hooks.onRetrying?.(null);
        return { ok: true, value };
      } catch (e) {
        if (e instanceof ApiError && e.status === 412) {
          this.hooks.onRetrying?.(null);
          const c = conflictOf(e);
          this.seen(c.currentVersion);
          let verdict: Verdict = "stop";
          try {
            if (intent.conflict && conflicts < (intent.maxConflicts ?? 20)) verdict = await intent.conflict(c);
          } catch (err) {
            return { ok: false, error: err }; // reading what changed failed
          }
          if (verdict === "again") {
            conflicts++;
            keyVersion = -1; // a new attempt, even on the same version
            continue;
          }
          return { ok: false, conflict: c };
        }
        if (unreachable(e) && !this.closed) {
          intent.retrying?.(e);
          this.hooks.onRetrying?.(e);
          await this.pause();
          if (!this.closed) continue;
        }
        this.hooks.onRetrying?.(null);
        return { ok: false, error: e };
      }
    }
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const t = setTimeout(done, this.retryMs);
      this.wake = done;
    });
  }
}
