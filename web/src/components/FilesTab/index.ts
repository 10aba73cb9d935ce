export { FilesTab } from "./View";
