export { SourcesTab } from "./View";
