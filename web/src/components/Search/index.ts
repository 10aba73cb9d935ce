// The search of the workspace's Notes: the header's field and the ⌘K /
// Ctrl+K palette.
export { Search, searchKeys } from "./Search";
