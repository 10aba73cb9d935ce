import type { Slide } from "../../api";

// The fields a person types in.
export type TextField = "title" | "body" | "notes";
export const textFields: TextField[] = ["title", "body", "notes"];
export const fieldName: Record<TextField, string> = { title: "Title", body: "Body", notes: "Speaker notes" };

// The person's unsaved text, by slide; a field both they and someone else
// changed (theirs to choose from); the text of a slide deleted while they
// wrote in it.
export type Fields = Partial<Record<TextField, string>>;
export type Drafts = Record<string, Fields>;
export type Clash = { theirs: string; who: string };
export type Lost = { title: string; body: string; notes: string; who: string };

// Deck is what the slides view shows: the deck as the server has it
// (base), the person's unsaved text over it, and the state of saving.
export type Deck = {
  base: Slide[];
  drafts: Drafts;
  clashes: Record<string, Clash>; // by "slide_id:field"
  lost: Lost[];
  selected: string;
  busy: number; // writes and reads queued or under way
  error: string;
  notice: string;
  titleFocus: number; // grows when a new slide's title should take focus
  fresh: string; // the slide just added, while it is selected: its title shows empty until typed
};
