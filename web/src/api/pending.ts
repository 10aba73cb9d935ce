// The fields of a sheet in a tab's content that the OpenAPI document does
// not describe yet (TabSheet: its column widths and number formats, as the
// Sheet schema has them). It goes once the generated types have them.
import type { Schema } from "./types";

export type SheetLayout = Partial<Pick<Schema<"Sheet">, "widths" | "formats">>;
