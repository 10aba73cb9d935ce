import { lazyView } from "../lazyView";
import "./approvals.css";

// The approvals page, with its syntax highlighter (the CodeMirror
// languages' parsers), loads when it is first opened.
export const ApprovalsPage = lazyView<{ pending: number | null }>("approvals page", () => import("./View").then((m) => m.ApprovalsPage));
export { PendingBadge } from "./PendingBadge";
export { usePendingCount } from "./usePendingCount";
