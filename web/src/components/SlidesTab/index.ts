export { SlidesTab } from "./View";
