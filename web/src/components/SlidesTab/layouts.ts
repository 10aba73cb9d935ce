import type { Slide } from "../../api";

// The layouts and themes Foundry knows (internal/note: SlideLayouts,
// SlideThemes); "" on a slide is the first of each.
export const layouts = [
  { id: "title-body", name: "Title and body" },
  { id: "title", name: "Title" },
  { id: "section", name: "Section" },
  { id: "two-column", name: "Two columns" },
  { id: "quote", name: "Quote" },
] as const;
export const themes = [
  { id: "paper", name: "Paper" },
  { id: "ink", name: "Ink" },
  { id: "ocean", name: "Ocean" },
  { id: "forest", name: "Forest" },
  { id: "sunset", name: "Sunset" },
] as const;

export const layoutOf = (s: Slide) => s.layout || "title-body";
export const themeOf = (s: Slide) => s.theme || "paper";
