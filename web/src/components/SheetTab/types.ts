import type { Sheet } from "../../api";
import type { Schema } from "../../api/types";

export type SheetLayout = Partial<Pick<Schema<"TabSheet">, "widths" | "formats">>;

// SheetRef is a sheet as the sub-tabs show it: its name, size (a tab read
// with cells=none gives no cells), column widths and number formats.
export type SheetRef = Pick<Sheet, "sheet_id" | "name"> & Partial<Pick<Sheet, "rows" | "cols">> & SheetLayout;

export const refOf = (s: Sheet): SheetRef => {
  const l = s as Sheet & SheetLayout;
  return { sheet_id: s.sheet_id, name: s.name, rows: s.rows, cols: s.cols, widths: l.widths, formats: l.formats };
};

export const MAX_SHEETS = 20;
export const MAX_NAME = 100;
