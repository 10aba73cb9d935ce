// The sheet calls the OpenAPI document does not describe yet (layout,
// import, export), made with fetch and the session's headers, and the
// fields of the sheet's wire shapes the generated types do not have yet.
// Each moves to endpoints.ts and the generated types once the document has it.
import { ApiError, csrfToken, guard, refused, signInPath, type Precondition } from "./client";
import type { TabAt, Ref } from "./endpoints";
import type { TabRef, Written } from "./types";

// Imported is the tab an import made.
export type Imported = Written & Pick<TabRef, "tab_id"> & Partial<Pick<TabRef, "label">>;

export type Formula = { row: number; col: number; cell: string; formula: string };
export type FormatRange = { range: string; format: string };
export type SheetLayout = { widths?: Record<string, number> | null; formats?: FormatRange[] | null };
export type LayoutChange = { widths?: Record<string, number>; format?: FormatRange };

async function call<T>(method: string, path: string, pre: Precondition, body: BodyInit, type: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: { ...guard(pre), "Content-Type": type, Accept: "application/json, application/problem+json", "X-CSRF-Token": csrfToken() },
      body,
    });
  } catch {
    throw new ApiError(0, "Foundry cannot be reached: check the connection and try again.");
  }
  if (res.status === 401) location.assign(signInPath());
  let data: unknown;
  try {
    data = await res.json();
  } catch {
    data = undefined;
  }
  if (!res.ok) throw refused(res.status, data);
  if (data === undefined) throw new ApiError(res.status, "Foundry answered something that is not JSON; try again.");
  return data as T;
}

const enc = encodeURIComponent;

export const sheetApi = {
  // layout sets column widths (0: the default) or a number format of a range.
  layout: (t: TabAt, sheet: string, change: LayoutChange, pre: Precondition) =>
    call<{ version: number }>(
      "PATCH",
      `/api/notes/${enc(t.id)}/tabs/${enc(t.tab_id)}/sheets/${enc(sheet)}/layout`,
      pre,
      JSON.stringify({ expected_version: Number(pre.version), ...change }),
      "application/json",
    ),
  // importFile makes a sheet tab of an .xlsx or .csv file.
  importFile: (n: Ref, file: File, pre: Precondition) =>
    call<Imported>(
      "POST",
      `/api/notes/${enc(n.id)}/tabs/import?name=${enc(file.name)}`,
      pre,
      file,
      file.type || "application/octet-stream",
    ),
  // exportHref is where a tab is downloaded from as a file (a link).
  exportHref: (t: TabAt, format: "xlsx" | "csv" | "md", sheet?: string) =>
    `/api/notes/${enc(t.id)}/tabs/${enc(t.tab_id)}/export?format=${format}` + (sheet ? `&sheet_id=${enc(sheet)}` : ""),
};
