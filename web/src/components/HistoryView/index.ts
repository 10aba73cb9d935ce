export { HistoryView } from "./View";
export type { HistoryProps } from "./types";
