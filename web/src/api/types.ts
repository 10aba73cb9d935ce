// The REST API's wire shapes: what /api/ answers and takes. Components
// import them from "../api" and never spell a wire shape themselves, so
// that when these are generated from the OpenAPI document (schema.d.ts,
// openapi-typescript) each becomes an alias of its schema here —
// export type Note = components["schemas"]["Note"] — and nothing else
// changes.

// Change is one version written since the one a refused write (412) was
// based on, with who wrote it and the tabs it changed.
export type Change = { version: number; who?: { kind?: string; name?: string }; at?: string; changed?: string[] };

// Problem is an RFC 9457 problem+json answer, with Foundry's members.
export type Problem = {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  message?: string; // older answers
  field?: string;
  current_version?: number | string;
  changes?: Change[];
};

export type Actor = { kind: string; id: string; name: string };

export type Me = {
  user: { id: string; email: string; name: string; role: string };
  workspace: { id: string; name: string };
  csrf_token: string;
};

// Notes.

export type Note = { id: string; title: string; approved: boolean; version: string | number; updated_at?: string };
export type NotesList = { notes: Note[] | null; next_cursor?: string | null };
export type NoteChange = { title?: string; approved?: boolean };

export type TabType = "markdown" | "slides" | "sheet" | "sources" | "files";
export type TabRef = { tab_id: string; type: string; label: string; position: number };
export type NoteView = { id: string; title: string; approved: boolean; version: number; tabs: TabRef[] };

export type Slide = { slide_id: string; title: string; body: string; notes: string; layout?: string; theme?: string };
export type Source = { source_id: string; title: string; url: string; normalized_url: string; added_at: string };
export type NoteFile = { file_id: string; name: string; content_type: string; size_bytes: number; sha256: string; added_at: string };

// Sheet is a sheet as a tab read gives it: its cells when read whole; read
// with cells=none, its size instead (an older server gives the cells).
export type Sheet = { sheet_id: string; name: string; cells?: unknown[][]; rows?: number; cols?: number };

// TabContent is GET /api/notes/{id}/tabs/{tab_id}: one tab's data, by its type.
export type TabContent = {
  note_id: string;
  version: number;
  tab_id: string;
  type: string;
  label: string;
  text?: string;
  slides?: Slide[];
  sheets?: Sheet[];
  sources?: Source[];
  files?: NoteFile[];
};

// Written is what every Note write answers: the version it made.
export type Written = { version: number };
export type WriteResult = Written & { id: string; changed_tab_ids: string[] };
export type TabCreated = Written & { tab_id: string };
export type TabChange = { label?: string; position?: number };

export type SlideFields = { title?: string; body?: string; notes?: string; layout?: string; theme?: string; position?: number };
export type SlideWrite = WriteResult & { slide_id: string };

export type SheetWritten = Written & { sheet_id: string; name: string };
export type CellBlock = { version: number; values: unknown[][] };
export type CellRange = { sheet_id: string; row: number; col: number; rows: number; cols: number };
export type CellsWrite = { sheet_id: string; start_row: number; start_col: number; values: (string | number | boolean | null)[][] };

export type SourceAdded = Written & { source_id: string };
export type FileAdded = Written & { file: NoteFile };

// History.

export type VersionEntry = { version: number; kind: string; who: Actor; at: string; changed: string[]; bytes: number };
export type History = { id: string; version: number; versions: VersionEntry[] };
export type VersionView = { id: string; title: string; version: number; current_version: number; tabs: TabRef[] };

// The live stream, GET /api/events?note_id=…: a write event, and the end
// event the server sends when it ends the stream.
export type NoteEvent = { cursor: string; kind: string; version: number; changed: string[] | null; actor: Actor };
export type StreamEnd = { reason?: string };

// Connections.

export type Connection = {
  id: string;
  kind: "oauth" | "token" | string;
  name: string;
  client_id?: string;
  client_host?: string;
  user: { id: string; email: string };
  scopes: string[];
  notes: string[] | null;
  rooms: string[] | null;
  names?: Record<string, string>;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  revoked: boolean;
};

// Proposals.

export type CompileMessage = { file: string; line: number; column: number; text: string; line_text: string };

export type Proposal = {
  proposal_id: string;
  room_id: string;
  room_name: string;
  name: string;
  kind: "snippet" | "repository" | string;
  status: string;
  proposed_by: Actor;
  proposed_at: string;
  file_count: number;
  compile: { ok: boolean; errors: CompileMessage[] | null } | null;
  repository?: { repository_id: string; name: string; version_id: string };
};
export type ProposalFile = { path: string; text: string; bytes: number };
export type ProposalDetail = Proposal & { files: ProposalFile[]; warnings?: CompileMessage[] | null };
export type Decision = { proposal_id: string; status: string; room_id: string; instance_id: string; version: number };
export type PendingCount = { pending: number };

// Rooms.

export type Person = { id: string; name: string };
export type RoomSummary = { room_id: string; name: string; owner: Person; apps: number; pending: number; version: number | string };
export type RoomApp = {
  instance_id: string;
  name: string;
  kind: "snippet" | "repository";
  position: number;
  proposal_id?: string;
  repository?: { repository_id: string; name: string; version_id: string; build_state: string };
  added_at?: string;
};
export type Room = { room_id: string; name: string; owner: Person; version: number | string; can_manage: boolean; apps: RoomApp[] };
export type RoomWritten = { room_id?: string; version?: number | string };
export type AppChange = { name?: string; position?: number };

// AppBundle is an approved app compiled; ok false (js empty) when it does
// not compile, and then errors says why.
export type BundleMessage = { file?: string; line?: number; column?: number; text?: string; line_text?: string };
export type AppBundle = { hash: string; js: string; css: string; ok?: boolean; errors?: BundleMessage[] };
