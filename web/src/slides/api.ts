import { call, type Slide, type TabContent, type WriteResult } from "../api";

// The REST calls of the slides editor. Every write carries the version it
// is based on (If-Match) and an Idempotency-Key that names the attempt.

export type SlideWrite = WriteResult & { slide_id: string };

// The fields a person types in; what a layout or theme is.
export type TextField = "title" | "body" | "notes";
export const textFields: TextField[] = ["title", "body", "notes"];

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

export type SlidePatch = { title?: string; body?: string; notes?: string; layout?: string; theme?: string; position?: number };

const deck = (note: string, tab: string) => "/api/notes/" + encodeURIComponent(note) + "/tabs/" + encodeURIComponent(tab);

export const slidesApi = {
  read: (note: string, tab: string, signal?: AbortSignal) => call<TabContent>(deck(note, tab), { signal }),
  add: (note: string, tab: string, s: SlidePatch & { title: string }, version: number, key: string) =>
    call<SlideWrite>(deck(note, tab) + "/slides", { method: "POST", body: s, ifMatch: version, idempotencyKey: key }),
  patch: (note: string, tab: string, slide: string, p: SlidePatch, version: number, key: string) =>
    call<SlideWrite>(deck(note, tab) + "/slides/" + encodeURIComponent(slide), { method: "PATCH", body: p, ifMatch: version, idempotencyKey: key }),
  remove: (note: string, tab: string, slide: string, version: number, key: string) =>
    call<void>(deck(note, tab) + "/slides/" + encodeURIComponent(slide), { method: "DELETE", ifMatch: version, idempotencyKey: key }),
};

export function newKey(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
}
