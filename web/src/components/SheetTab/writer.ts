import { api, type Precondition, type TabAt } from "../../api";
import type { Saver, SaveState } from "../../save";
import { cellName, type Cell } from "./cells";

// Writer saves a sheet tab's changes through the Note's save path, one at
// a time, each based on the version the one before it left. On a 412:
//   - the tab was not changed (someone wrote elsewhere in the Note): the
//     same change is sent again on the new version;
//   - the tab was changed: the cells where the change goes are read
//     again and shown (the caller says which of them someone else changed
//     too), then the person's change is sent again on the new version, so
//     theirs wins only after the other value was shown, and nothing typed
//     is lost.
// A write the server refuses (a limit, a bad value) is dropped and the
// server's cells are shown again with the reason.

const MAX_CONFLICTS = 20;

export type CellHandlers = {
  conflict: (server: unknown[][]) => void;
  refused: (server: unknown[][] | null) => void;
  saved?: () => void;
};

export type WriterHooks = {
  onVersion: (v: number) => void;
  onState: (s: SaveState) => void;
  onNotice: (text: string) => void;
};

export class Writer {
  private saver: Saver;
  private tab: TabAt;
  private pendingCells = new Map<string, number>();
  private queued = 0;
  hooks: WriterHooks;

  constructor(noteId: string, tabId: string, saver: Saver, hooks: WriterHooks) {
    this.tab = { id: noteId, tab_id: tabId };
    this.saver = saver;
    this.hooks = hooks;
  }

  listen(hooks: WriterHooks) {
    this.hooks = hooks;
  }

  // pending says whether cell (r, c) of sheet has an edit not yet saved.
  pending(sheet: string, r: number, c: number): boolean {
    return (this.pendingCells.get(sheet + "|" + r + "|" + c) ?? 0) > 0;
  }

  get busyWriting(): boolean {
    return this.queued > 0;
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

  private async read(sheet: string, row: number, col: number, rows: number, cols: number): Promise<unknown[][]> {
    const r = await api.cells(this.tab, { sheet_id: sheet, row, col, rows, cols });
    this.hooks.onVersion(r.version);
    // A formula cell is its formula here (what the person wrote in it).
    const values = (r.values ?? []).map((row) => row.slice());
    for (const f of r.formulas ?? []) {
      const line = values[f.row - row];
      if (line && f.col - col < line.length) line[f.col - col] = f.formula;
    }
    return values;
  }

  // run sends one change; conflict, when the tab changed, shows what is
  // there first.
  private async run<T>(send: (pre: Precondition) => Promise<T>, conflict?: () => Promise<void>): Promise<T> {
    this.queued++;
    this.hooks.onState("saving");
    try {
      const out = await this.saver.run({
        send,
        maxConflicts: MAX_CONFLICTS,
        retrying: (e) => {
          this.hooks.onState("error");
          this.hooks.onNotice("Not saved yet: " + e.message + " Foundry tries again in a moment.");
        },
        conflict: async (c) => {
          if (c.currentVersion === undefined) return "stop";
          if (conflict && c.touches(this.tab.tab_id)) {
            try {
              await conflict();
            } catch {
              // shown on the next try
            }
          }
          this.saver.rebase(c.currentVersion);
          return "again";
        },
      });
      if (out.ok) return out.value;
      throw "conflict" in out ? new Error("This sheet kept changing while it was saved: read it again.") : out.error;
    } finally {
      this.queued--;
      if (this.queued === 0) this.hooks.onState("saved");
    }
  }

  // cells saves values (at most 100 × 100) at (r0, c0) of sheet.
  cells(sheet: string, r0: number, c0: number, values: Cell[][], _base: Cell[][], h: CellHandlers) {
    const width = values.reduce((m, r) => Math.max(m, r.length), 0);
    this.mark(sheet, r0, c0, values, +1);
    this.run(
      (pre) => api.setCells(this.tab, { sheet_id: sheet, start_row: r0, start_col: c0, values }, pre),
      async () => h.conflict(await this.read(sheet, r0, c0, values.length, width)),
    ).then(
      () => {
        this.mark(sheet, r0, c0, values, -1);
        h.saved?.();
      },
      (e: unknown) => {
        this.mark(sheet, r0, c0, values, -1);
        // A refused cell is named (the server's reason may not say which).
        const one = values.length === 1 && width === 1 ? " " + cellName(r0, c0) : "";
        this.hooks.onNotice("Not saved" + one + ": " + (e instanceof Error ? e.message : String(e)));
        this.read(sheet, r0, c0, values.length, width).then(h.refused, () => h.refused(null));
      },
    );
  }

  // op saves one change of the tab's sheets (add, rename a sheet).
  op<T>(send: (pre: Precondition) => Promise<T>): Promise<T> {
    return this.run(send);
  }
}
