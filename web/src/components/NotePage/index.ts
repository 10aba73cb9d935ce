export { NotePage } from "./View";
export type { NotePageProps } from "./types";
