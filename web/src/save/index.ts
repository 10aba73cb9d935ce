export { Saver, newKey, RETRY_MS, type Intent, type Outcome, type Verdict } from "./saver";
export { useSave, type Save, type SaveOptions } from "./useSave";
export { conflictOf, writers, capital, type Conflict } from "./conflict";
export type { SaveState } from "./types";
