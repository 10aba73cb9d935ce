import { answer, client, guard, rawUpload, url, written, type Precondition } from "./client";
import type {
  AppChange,
  CellRange,
  CellsWrite,
  LayoutChange,
  Invite,
  NewSlide,
  NewSource,
  NewTab,
  NewToken,
  Note,
  NoteChange,
  PresenceBody,
  Role,
  Room,
  SearchQuery,
  SlideFields,
  TabChange,
  TabRef,
  TextPushBody,
  TrashedNote,
} from "./types";

// Every call the web app makes, one function each, through the client
// typed by the OpenAPI document: a call's route, parameters, headers and
// body are checked against the document, and its answer is the document's.
// A write takes the Precondition it is guarded by (the version it was based
// on, the key of this attempt): the shared save path (src/save) supplies it.

// Ref names a Note, TabAt one of its tabs.
export type Ref = { id: string };
export type TabAt = Ref & Pick<TabRef, "tab_id">;

const noteAt = (n: Ref) => ({ note_id: n.id });
const tabAt = (t: TabAt) => ({ note_id: t.id, tab_id: t.tab_id });

export const api = {
  me: () => answer(client.GET("/api/me")),

  notes: (query: string, cursor: string, signal?: AbortSignal) =>
    answer(client.GET("/api/notes", { params: { query: { query: query || undefined, cursor: cursor || undefined, limit: 50 } }, signal })),
  createNote: (title: string) => answer(client.POST("/api/notes", { body: { title } })),
  patchNote: (n: Pick<Note, "id" | "version">, change: NoteChange) =>
    answer(client.PATCH("/api/notes/{note_id}", { params: { path: noteAt(n), header: guard({ version: n.version }) }, body: change })),
  deleteNote: (n: Pick<Note, "id" | "version">) =>
    written(client.DELETE("/api/notes/{note_id}", { params: { path: noteAt(n), header: guard({ version: n.version }) } })),
  duplicateNote: (id: string) => answer(client.POST("/api/notes/{note_id}/duplicate", { params: { path: { note_id: id } } })),

  // Full-text search of the workspace's Notes: a page of hits, each a
  // place in a tab with a snippet.
  search: (query: SearchQuery, signal?: AbortSignal) => answer(client.GET("/api/search", { params: { query }, signal })),

  // The trash: deleted Notes, restorable until their purge date.
  trash: (cursor: string, signal?: AbortSignal) => answer(client.GET("/api/trash", { params: { query: { cursor: cursor || undefined, limit: 50 } }, signal })),
  untrashNote: (n: Pick<TrashedNote, "id" | "version">) =>
    // Without a version (0), whatever version the trash holds.
    answer(client.POST("/api/notes/{note_id}/untrash", { params: { path: noteAt(n), header: n.version > 0 ? guard({ version: n.version }) : {} } })),

  // The Note: its title, version and tab strip.
  note: (id: string, signal?: AbortSignal) => answer(client.GET("/api/notes/{note_id}", { params: { path: { note_id: id } }, signal })),
  addTab: (id: string, body: NewTab, pre: Precondition) =>
    answer(client.POST("/api/notes/{note_id}/tabs", { params: { path: { note_id: id }, header: guard(pre) }, body })),
  patchTab: (t: TabAt, change: TabChange, pre: Precondition) =>
    answer(client.PATCH("/api/notes/{note_id}/tabs/{tab_id}", { params: { path: tabAt(t), header: guard(pre) }, body: change })),
  deleteTab: (t: TabAt, pre: Precondition) => written(client.DELETE("/api/notes/{note_id}/tabs/{tab_id}", { params: { path: tabAt(t), header: guard(pre) } })),

  // A tab's content; a sheet tab's outline is its sheets without their
  // cells (the grid reads those in blocks as they come into view).
  tab: (t: TabAt, signal?: AbortSignal) => answer(client.GET("/api/notes/{note_id}/tabs/{tab_id}", { params: { path: tabAt(t) }, signal })),
  outline: (t: TabAt, signal?: AbortSignal) =>
    answer(client.GET("/api/notes/{note_id}/tabs/{tab_id}", { params: { path: tabAt(t), query: { cells: "none" } }, signal })),

  // The markdown text, edited live (the protocol of @codemirror/collab):
  // the updates after a revision, and change sets pushed on the revision
  // they are based on (no If-Match: the revision is the guard).
  pullText: (id: string, after: number, signal?: AbortSignal) =>
    answer(client.GET("/api/notes/{note_id}/text", { params: { path: { note_id: id }, query: { after } }, signal })),
  pushText: (id: string, body: TextPushBody) => answer(client.POST("/api/notes/{note_id}/text", { params: { path: { note_id: id } }, body })),
  // Where the person is in the Note (not a version: the others see it on
  // their live streams for 30 s).
  presence: (id: string, body: PresenceBody) => answer(client.POST("/api/notes/{note_id}/presence", { params: { path: { note_id: id } }, body })),

  setText: (t: TabAt, text: string, pre: Precondition) =>
    answer(client.PUT("/api/notes/{note_id}/tabs/{tab_id}/text", { params: { path: tabAt(t), header: guard(pre) }, body: { text } })),

  addSlide: (t: TabAt, s: NewSlide, pre: Precondition) =>
    answer(client.POST("/api/notes/{note_id}/tabs/{tab_id}/slides", { params: { path: tabAt(t), header: guard(pre) }, body: s })),
  patchSlide: (t: TabAt, slide: string, p: SlideFields, pre: Precondition) =>
    answer(
      client.PATCH("/api/notes/{note_id}/tabs/{tab_id}/slides/{slide_id}", { params: { path: { ...tabAt(t), slide_id: slide }, header: guard(pre) }, body: p }),
    ),
  deleteSlide: (t: TabAt, slide: string, pre: Precondition) =>
    written(client.DELETE("/api/notes/{note_id}/tabs/{tab_id}/slides/{slide_id}", { params: { path: { ...tabAt(t), slide_id: slide }, header: guard(pre) } })),

  addSheet: (t: TabAt, name: string, pre: Precondition) =>
    answer(client.POST("/api/notes/{note_id}/tabs/{tab_id}/sheets", { params: { path: tabAt(t), header: guard(pre) }, body: { name } })),
  renameSheet: (t: TabAt, sheet: string, name: string, pre: Precondition) =>
    answer(
      client.PATCH("/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}", { params: { path: { ...tabAt(t), sheet_id: sheet }, header: guard(pre) }, body: { name } }),
    ),
  // layout sets a sheet's column widths (0: the default) or a range's
  // number format (general: none).
  sheetLayout: (t: TabAt, sheet: string, change: LayoutChange, pre: Precondition) =>
    answer(
      client.PATCH("/api/notes/{note_id}/tabs/{tab_id}/sheets/{sheet_id}/layout", {
        params: { path: { ...tabAt(t), sheet_id: sheet }, header: guard(pre) },
        body: change,
      }),
    ),
  // importSheet makes a new sheet tab of an .xlsx or .csv file, sent as
  // the raw body of the POST.
  importSheet: (n: Ref, file: File, pre: Precondition) =>
    answer(
      client.POST("/api/notes/{note_id}/tabs/import", {
        params: { path: noteAt(n), query: { name: file.name }, header: { ...guard(pre), "Content-Type": file.type || "application/octet-stream" } },
        fetch: rawUpload(file, () => {}),
      }),
    ),
  // exportHref is where a tab is downloaded as a file (a link): a sheet
  // tab as xlsx (every sheet) or csv (one sheet), the markdown as md, a
  // slides tab as pdf.
  tabExportHref: (t: TabAt, format: "xlsx" | "csv" | "md" | "pdf", sheet?: string) =>
    url("/api/notes/{note_id}/tabs/{tab_id}/export", { path: tabAt(t), query: sheet ? { format, sheet_id: sheet } : { format } }),
  cells: (t: TabAt, r: CellRange, signal?: AbortSignal) =>
    answer(
      client.GET("/api/notes/{note_id}/tabs/{tab_id}/cells", {
        params: { path: tabAt(t), query: { sheet_id: r.sheet_id, row: r.row, col: r.col, rows: Math.max(1, r.rows), cols: Math.max(1, r.cols) } },
        signal,
      }),
    ),
  setCells: (t: TabAt, body: CellsWrite, pre: Precondition) =>
    answer(client.PUT("/api/notes/{note_id}/tabs/{tab_id}/cells", { params: { path: tabAt(t), header: guard(pre) }, body })),

  addSource: (n: Ref, body: NewSource, pre: Precondition) =>
    answer(client.POST("/api/notes/{note_id}/sources", { params: { path: noteAt(n), header: guard(pre) }, body })),
  deleteSource: (n: Ref, source: string, pre: Precondition) =>
    written(client.DELETE("/api/notes/{note_id}/sources/{source_id}", { params: { path: { ...noteAt(n), source_id: source }, header: guard(pre) } })),

  // A file is uploaded as the raw body of the POST (with its upload
  // progress: rawUpload sends it).
  uploadFile: (n: Ref, file: File, pre: Precondition, progress: (loaded: number) => void) =>
    answer(
      client.POST("/api/notes/{note_id}/files", {
        params: { path: noteAt(n), query: { name: file.name }, header: { ...guard(pre), "Content-Type": file.type || "application/octet-stream" } },
        fetch: rawUpload(file, progress),
      }),
    ),
  deleteFile: (n: Ref, file: string, pre: Precondition) =>
    written(client.DELETE("/api/notes/{note_id}/files/{file_id}", { params: { path: { ...noteAt(n), file_id: file }, header: guard(pre) } })),
  // fileHref is where a file is downloaded from (a link, not a call).
  fileHref: (n: Ref, file: string) => url("/api/notes/{note_id}/files/{file_id}", { path: { ...noteAt(n), file_id: file } }),
  // exportHref is where a Note is downloaded as a zip (with every version
  // when history).
  exportHref: (id: string, history: boolean) =>
    url("/api/notes/{note_id}/export", { path: { note_id: id }, query: history ? { history: true } : {} }),

  // A page of the history, newest first; cursor "" is the newest page.
  history: (id: string, cursor: string, signal?: AbortSignal) =>
    answer(client.GET("/api/notes/{note_id}/history", { params: { path: { note_id: id }, query: { cursor: cursor || undefined } }, signal })),
  // What version changed: against the version before it, or since an
  // older one (0: the version before).
  diff: (id: string, version: number, since: number, signal?: AbortSignal) =>
    answer(
      client.GET("/api/notes/{note_id}/versions/{version}/diff", {
        params: { path: { note_id: id, version }, query: { since: since > 0 ? since : undefined } },
        signal,
      }),
    ),
  version: (id: string, version: number, signal?: AbortSignal) =>
    answer(client.GET("/api/notes/{note_id}/versions/{version}", { params: { path: { note_id: id, version } }, signal })),
  versionTab: (id: string, version: number, tab_id: string, signal?: AbortSignal) =>
    answer(client.GET("/api/notes/{note_id}/versions/{version}/tabs/{tab_id}", { params: { path: { note_id: id, version, tab_id } }, signal })),
  restore: (id: string, version: number, pre: Precondition) =>
    answer(client.POST("/api/notes/{note_id}/restore", { params: { path: { note_id: id }, header: guard(pre) }, body: { version } })),

  // The live stream (Server-Sent Events): every topic the pages of this
  // browser follow ("note:ID", "proposals"), after a cursor ("": from
  // now). src/live holds it, once for every tab.
  live: (topics: string[], after: string) => new EventSource(url("/api/live", { query: { topic: topics, after: after || undefined } })),

  connections: () => answer(client.GET("/api/connections")),

  // Settings: the people (owners invite, change roles, remove), the
  // workspace (owners rename it) and the personal access tokens.
  people: (signal?: AbortSignal) => answer(client.GET("/api/people", { signal })),
  invite: (body: Invite) => answer(client.POST("/api/people", { body })),
  changeRole: (id: string, role: Role) => answer(client.PATCH("/api/people/{id}", { params: { path: { id } }, body: { role } })),
  removePerson: (id: string) => written(client.DELETE("/api/people/{id}", { params: { path: { id } } })),
  workspace: (signal?: AbortSignal) => answer(client.GET("/api/workspace", { signal })),
  renameWorkspace: (name: string) => answer(client.PATCH("/api/workspace", { body: { name } })),
  tokens: (signal?: AbortSignal) => answer(client.GET("/api/tokens", { signal })),
  createToken: (body: NewToken) => answer(client.POST("/api/tokens", { body })),
  revokeToken: (id: string) => written(client.DELETE("/api/tokens/{id}", { params: { path: { id } } })),
  revoke: (id: string) => written(client.DELETE("/api/connections/{id}", { params: { path: { id } } })),

  pendingProposals: (signal?: AbortSignal) => answer(client.GET("/api/proposals", { params: { query: { status: "pending" } }, signal })),
  proposal: (id: string, signal?: AbortSignal) => answer(client.GET("/api/proposals/{proposal_id}", { params: { path: { proposal_id: id } }, signal })),
  decide: (id: string, how: "approve" | "decline") =>
    answer(client.POST(how === "approve" ? "/api/proposals/{proposal_id}/approve" : "/api/proposals/{proposal_id}/decline", { params: { path: { proposal_id: id } } })),
  pendingCount: () => answer(client.GET("/api/proposals/count")),

  rooms: (signal?: AbortSignal) => answer(client.GET("/api/rooms", { signal })),
  room: (id: string, signal?: AbortSignal) => answer(client.GET("/api/rooms/{room_id}", { params: { path: { room_id: id } }, signal })),
  createRoom: (name: string) => answer(client.POST("/api/rooms", { body: { name } })),
  renameRoom: (room: Room, name: string) =>
    answer(client.PATCH("/api/rooms/{room_id}", { params: { path: { room_id: room.room_id }, header: guard({ version: room.version }) }, body: { name } })),
  deleteRoom: (room: Room) => written(client.DELETE("/api/rooms/{room_id}", { params: { path: { room_id: room.room_id }, header: guard({ version: room.version }) } })),
  patchApp: (room: Room, instance: string, change: AppChange) =>
    answer(
      client.PATCH("/api/rooms/{room_id}/apps/{instance_id}", {
        params: { path: { room_id: room.room_id, instance_id: instance }, header: guard({ version: room.version }) },
        body: change,
      }),
    ),
  removeApp: (room: Room, instance: string) =>
    answer(client.DELETE("/api/rooms/{room_id}/apps/{instance_id}", { params: { path: { room_id: room.room_id, instance_id: instance }, header: guard({ version: room.version }) } })),
  bundle: (room: string, instance: string, signal?: AbortSignal) =>
    answer(client.GET("/api/rooms/{room_id}/apps/{instance_id}/bundle", { params: { path: { room_id: room, instance_id: instance } }, signal })),
};
