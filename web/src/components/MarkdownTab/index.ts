export { MarkdownTab } from "./View";
export { preview } from "./preview";
export type { MarkdownProps } from "./types";
