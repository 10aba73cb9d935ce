import { request, upload, url, type Precondition } from "./client";
import type {
  AppBundle,
  AppChange,
  CellBlock,
  CellRange,
  CellsWrite,
  Connection,
  Decision,
  FileAdded,
  History,
  Me,
  Note,
  NoteChange,
  NotesList,
  NoteView,
  PendingCount,
  ProposalDetail,
  Proposal,
  Room,
  RoomSummary,
  RoomWritten,
  SheetWritten,
  SlideFields,
  SlideWrite,
  SourceAdded,
  TabChange,
  TabContent,
  TabCreated,
  VersionView,
  WriteResult,
  Written,
} from "./types";

// Every call the web app makes, one function each. A write takes the
// Precondition it is guarded by (the version it was based on, the key of
// this attempt): the shared save path (src/save) supplies it.

const note = "/api/notes/{id}";
const tab = note + "/tabs/{tab_id}";

type Ref = { id: string };
type TabAt = { id: string; tab_id: string };

export const api = {
  me: () => request<Me>("GET", "/api/me"),

  notes: (query: string, cursor: string, signal?: AbortSignal) =>
    request<NotesList>("GET", "/api/notes", { params: { query: { query, cursor, limit: 50 } }, signal }),
  createNote: (title: string) => request<Note>("POST", "/api/notes", { body: { title } }),
  patchNote: (n: Note, change: NoteChange) => request<Note>("PATCH", note, { params: { path: { id: n.id } }, body: change, pre: { version: n.version } }),
  deleteNote: (n: Note) => request<void>("DELETE", note, { params: { path: { id: n.id } }, pre: { version: n.version } }),

  // The Note: its title, version and tab strip.
  note: (id: string, signal?: AbortSignal) => request<NoteView>("GET", note, { params: { path: { id } }, signal }),
  addTab: (id: string, body: { type: "slides" | "sheet"; label: string }, pre: Precondition) =>
    request<TabCreated>("POST", note + "/tabs", { params: { path: { id } }, body, pre }),
  patchTab: (t: TabAt, change: TabChange, pre: Precondition) => request<Written>("PATCH", tab, { params: { path: t }, body: change, pre }),
  deleteTab: (t: TabAt, pre: Precondition) => request<Written | undefined>("DELETE", tab, { params: { path: t }, pre }),

  // A tab's content; a sheet tab's outline is its sheets without their
  // cells (the grid reads those in blocks as they come into view).
  tab: (t: TabAt, signal?: AbortSignal) => request<TabContent>("GET", tab, { params: { path: t }, signal }),
  outline: (t: TabAt, signal?: AbortSignal) => request<TabContent>("GET", tab, { params: { path: t, query: { cells: "none" } }, signal }),

  setText: (t: TabAt, text: string, pre: Precondition) => request<WriteResult>("PUT", tab + "/text", { params: { path: t }, body: { text }, pre }),

  addSlide: (t: TabAt, s: SlideFields & { title: string }, pre: Precondition) =>
    request<SlideWrite>("POST", tab + "/slides", { params: { path: t }, body: s, pre }),
  patchSlide: (t: TabAt, slide: string, p: SlideFields, pre: Precondition) =>
    request<SlideWrite>("PATCH", tab + "/slides/{slide_id}", { params: { path: { ...t, slide_id: slide } }, body: p, pre }),
  deleteSlide: (t: TabAt, slide: string, pre: Precondition) =>
    request<Written | undefined>("DELETE", tab + "/slides/{slide_id}", { params: { path: { ...t, slide_id: slide } }, pre }),

  addSheet: (t: TabAt, name: string, pre: Precondition) => request<SheetWritten>("POST", tab + "/sheets", { params: { path: t }, body: { name }, pre }),
  renameSheet: (t: TabAt, sheet: string, name: string, pre: Precondition) =>
    request<SheetWritten>("PATCH", tab + "/sheets/{sheet_id}", { params: { path: { ...t, sheet_id: sheet } }, body: { name }, pre }),
  cells: (t: TabAt, r: CellRange, signal?: AbortSignal) =>
    request<CellBlock>("GET", tab + "/cells", {
      params: { path: t, query: { sheet_id: r.sheet_id, row: r.row, col: r.col, rows: Math.max(1, r.rows), cols: Math.max(1, r.cols) } },
      signal,
    }),
  setCells: (t: TabAt, body: CellsWrite, pre: Precondition) => request<Written>("PUT", tab + "/cells", { params: { path: t }, body, pre }),

  addSource: (n: Ref, body: { url: string; title: string }, pre: Precondition) =>
    request<SourceAdded>("POST", note + "/sources", { params: { path: n }, body, pre }),
  deleteSource: (n: Ref, source: string, pre: Precondition) =>
    request<Written | undefined>("DELETE", note + "/sources/{source_id}", { params: { path: { ...n, source_id: source } }, pre }),

  uploadFile: (n: Ref, file: File, pre: Precondition, progress: (loaded: number) => void) =>
    upload<FileAdded>(note + "/files", { path: n, query: { name: file.name } }, file, pre, progress),
  deleteFile: (n: Ref, file: string, pre: Precondition) =>
    request<Written | undefined>("DELETE", note + "/files/{file_id}", { params: { path: { ...n, file_id: file } }, pre }),
  // fileHref is where a file is downloaded from (a link, not a call).
  fileHref: (n: Ref, file: string) => url(note + "/files/{file_id}", { path: { ...n, file_id: file } }),

  history: (id: string, signal?: AbortSignal) => request<History>("GET", note + "/history", { params: { path: { id } }, signal }),
  version: (id: string, version: number, signal?: AbortSignal) =>
    request<VersionView>("GET", note + "/versions/{version}", { params: { path: { id, version } }, signal }),
  versionTab: (id: string, version: number, tab_id: string, signal?: AbortSignal) =>
    request<TabContent>("GET", note + "/versions/{version}/tabs/{tab_id}", { params: { path: { id, version, tab_id } }, signal }),
  restore: (id: string, version: number, pre: Precondition) => request<Written>("POST", note + "/restore", { params: { path: { id } }, body: { version }, pre }),

  // The live streams (Server-Sent Events).
  noteEvents: (id: string) => new EventSource(url("/api/events", { query: { note_id: id } })),
  proposalEvents: () => new EventSource("/api/proposals/events"),

  connections: () => request<{ connections: Connection[] | null }>("GET", "/api/connections"),
  revoke: (id: string) => request<void>("DELETE", "/api/connections/{id}", { params: { path: { id } } }),

  pendingProposals: (signal?: AbortSignal) => request<{ proposals: Proposal[] | null }>("GET", "/api/proposals", { params: { query: { status: "pending" } }, signal }),
  proposal: (id: string, signal?: AbortSignal) => request<ProposalDetail>("GET", "/api/proposals/{proposal_id}", { params: { path: { proposal_id: id } }, signal }),
  decide: (id: string, how: "approve" | "decline") =>
    request<Decision>("POST", how === "approve" ? "/api/proposals/{proposal_id}/approve" : "/api/proposals/{proposal_id}/decline", { params: { path: { proposal_id: id } } }),
  pendingCount: () => request<PendingCount>("GET", "/api/proposals/count"),

  rooms: (signal?: AbortSignal) => request<{ rooms: RoomSummary[] | null }>("GET", "/api/rooms", { signal }),
  room: (id: string, signal?: AbortSignal) => request<Room>("GET", "/api/rooms/{room_id}", { params: { path: { room_id: id } }, signal }),
  patchApp: (room: Room, instance: string, change: AppChange) =>
    request<RoomWritten>("PATCH", "/api/rooms/{room_id}/apps/{instance_id}", { params: { path: { room_id: room.room_id, instance_id: instance } }, body: change, pre: { version: room.version } }),
  removeApp: (room: Room, instance: string) =>
    request<RoomWritten | undefined>("DELETE", "/api/rooms/{room_id}/apps/{instance_id}", { params: { path: { room_id: room.room_id, instance_id: instance } }, pre: { version: room.version } }),
  bundle: (room: string, instance: string, signal?: AbortSignal) =>
    request<AppBundle>("GET", "/api/rooms/{room_id}/apps/{instance_id}/bundle", { params: { path: { room_id: room, instance_id: instance } }, signal }),
};
