import { ApiError, call } from "../api";
import type { SaveState } from "../MarkdownTab";
import type { Cell } from "./cells";

// Writer saves a sheet tab's changes one at a time, each a guarded write
// based on the version it last learned, with an Idempotency-Key per
// attempt (a resend after a lost answer is answered once). On a 412:
//   - the tab was not changed (someone wrote elsewhere in the Note): the
//     same change is sent again on the new version;
//   - the tab was changed: the cells where the change goes are read
//     again and shown (the caller says which of them someone else changed
//     too), then the person's change is sent again on the new version, so
//     theirs wins only after the other value was shown, and nothing typed
//     is lost.
// A write the server refuses (a limit, a bad value) is dropped and the
// server's cells are shown again with the reason.

const RETRY_MS = 4000;
const MAX_CONFLICTS = 20;

type Job = {
  run: (version: number, key: string) => Promise<unknown>;
  conflict?: () => Promise<void>;
  done: (res: unknown) => void;
  fail: (e: unknown) => void;
  key: string;
  keyVersion: number;
  conflicts: number;
};

export type CellHandlers = {
  conflict: (server: unknown[][]) => void;
  refused: (server: unknown[][] | null) => void;
};

type Hooks = {
  onVersion: (v: number) => void;
  onState: (s: SaveState) => void;
  onNotice: (text: string) => void;
};

function newKey(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return "k" + Date.now().toString(36) + Math.random().toString(36).slice(2, 12);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Writer {
  version: number;
  closed = false;
  private queue: Job[] = [];
  private busy = false;
  private pendingCells = new Map<string, number>();

  constructor(
    private noteId: string,
    private tabId: string,
    version: number,
    public hooks: Hooks,
  ) {
    this.version = version;
  }

  path(): string {
    return "/api/notes/" + encodeURIComponent(this.noteId) + "/tabs/" + encodeURIComponent(this.tabId);
  }

  // pending says whether cell (r, c) of sheet has an edit not yet saved.
  pending(sheet: string, r: number, c: number): boolean {
    return (this.pendingCells.get(sheet + "|" + r + "|" + c) ?? 0) > 0;
  }

  get busyWriting(): boolean {
    return this.queue.length > 0;
  }

  private mark(sheet: string, r0: number, c0: number, values: Cell[][], d: number) {
    values.forEach((row, i) =>
      row.forEach((_, j) => {
        const k = sheet + "|" + (r0 + i) + "|" + (c0 + j);
        const n = (this.pendingCells.get(k) ?? 0) + d;
        if (n > 0) this.pendingCells.set(k, n);
        else this.pendingCells.delete(k);
      }),
    );
  }

  private read(sheet: string, r0: number, c0: number, rows: number, cols: number): Promise<unknown[][]> {
    const q = new URLSearchParams({ sheet_id: sheet, row: String(r0), col: String(c0), rows: String(Math.max(1, rows)), cols: String(Math.max(1, cols)) });
    return call<{ version: number; values: unknown[][] }>(this.path() + "/cells?" + q.toString()).then((r) => {
      this.hooks.onVersion(r.version);
      return r.values;
    });
  }

  // cells saves values (at most 100 × 100) at (r0, c0) of sheet.
  cells(sheet: string, r0: number, c0: number, values: Cell[][], _base: Cell[][], h: CellHandlers) {
    const width = values.reduce((m, r) => Math.max(m, r.length), 0);
    this.mark(sheet, r0, c0, values, +1);
    this.enqueue({
      run: (v, key) =>
        call(this.path() + "/cells", { method: "PUT", body: { sheet_id: sheet, start_row: r0, start_col: c0, values }, ifMatch: v, idempotencyKey: key }),
      conflict: async () => {
        const server = await this.read(sheet, r0, c0, values.length, width);
        h.conflict(server);
      },
      done: () => this.mark(sheet, r0, c0, values, -1),
      fail: (e) => {
        this.mark(sheet, r0, c0, values, -1);
        this.hooks.onNotice("Not saved: " + (e instanceof Error ? e.message : String(e)));
        this.read(sheet, r0, c0, values.length, width).then(h.refused, () => h.refused(null));
      },
    });
  }

  // op saves one change of the tab's sheets (add, rename, delete a sheet).
  op<T>(run: (version: number, key: string) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue({ run, done: (r) => resolve(r as T), fail: reject });
    });
  }

  private enqueue(j: Omit<Job, "key" | "keyVersion" | "conflicts">) {
    this.queue.push({ ...j, key: newKey(), keyVersion: this.version, conflicts: 0 });
    void this.pump();
  }

  private setVersion(v: number) {
    if (Number.isFinite(v) && v > 0) {
      this.version = v;
      this.hooks.onVersion(v);
    }
  }

  private async pump() {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const j = this.queue[0];
        this.hooks.onState("saving");
        if (j.keyVersion !== this.version) {
          j.key = newKey(); // a new attempt: on a new version
          j.keyVersion = this.version;
        }
        try {
          const res = (await j.run(this.version, j.key)) as { version?: number } | undefined;
          if (res && typeof res.version === "number") this.setVersion(res.version);
          this.queue.shift();
          j.done(res);
        } catch (e) {
          if (e instanceof ApiError && e.status === 412 && e.currentVersion !== undefined && ++j.conflicts <= MAX_CONFLICTS) {
            const cur = Number(e.currentVersion);
            const tabChanged = e.changes.length === 0 || e.changes.some((c) => (c.changed ?? []).includes(this.tabId));
            if (tabChanged && j.conflict) {
              try {
                await j.conflict();
              } catch {
                // shown on the next try
              }
            }
            this.setVersion(cur);
            continue;
          }
          if (e instanceof ApiError && (e.status === 0 || e.status === 429 || e.status >= 500)) {
            this.hooks.onState("error");
            this.hooks.onNotice("Not saved yet: " + e.message + " Foundry tries again in a moment.");
            await sleep(RETRY_MS); // the same key: a resend is answered once
            continue;
          }
          this.queue.shift();
          j.fail(e);
        }
      }
      if (!this.closed) this.hooks.onState("saved");
    } finally {
      this.busy = false;
    }
  }
}
