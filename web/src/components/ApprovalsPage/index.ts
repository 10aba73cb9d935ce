export { ApprovalsPage } from "./View";
export { PendingBadge } from "./PendingBadge";
export { usePendingCount } from "./usePendingCount";
