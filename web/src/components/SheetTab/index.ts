export { SheetTab } from "./View";
