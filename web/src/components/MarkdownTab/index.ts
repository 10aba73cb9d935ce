import { lazyView } from "../lazyView";
import type { MarkdownProps } from "./types";

// The markdown tab's editor (CodeMirror) loads with the first markdown
// tab opened.
export const MarkdownTab = lazyView<MarkdownProps>("markdown editor", () => import("./View").then((m) => m.MarkdownTab));
export { preview } from "./preview";
export type { MarkdownProps } from "./types";
