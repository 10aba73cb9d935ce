import type { Sheet } from "../../api";

// SheetRef is a sheet as the sub-tabs show it: its name and size (a tab
// read with cells=none gives no cells).
export type SheetRef = Pick<Sheet, "sheet_id" | "name"> & Partial<Pick<Sheet, "rows" | "cols">>;

export const refOf = (s: Sheet): SheetRef => ({ sheet_id: s.sheet_id, name: s.name, rows: s.rows, cols: s.cols });

export const MAX_SHEETS = 20;
export const MAX_NAME = 100;
