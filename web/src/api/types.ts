import type { components, paths } from "./schema";

// The REST API's wire shapes, as the OpenAPI document (internal/api/
// openapi.json, generated from the Go request and answer types) names
// them: schema.d.ts is generated from it by openapi-typescript (npm run
// gen:api) and never edited. Each type here is a schema by its name, under
// the name the app calls it by, or a part of one: no shape of a request or
// an answer is spelt out here (npm run lint refuses one: eslint/
// wire-types.js). Components import them from "../api".

// Schema is the document's schema by name.
export type Schema<N extends keyof components["schemas"]> = components["schemas"][N];

// Fields is a change's request as the web app sends it: the members it
// sets, never null (which the document allows for "not given"), and no
// expected_version (the If-Match header says it).
export type Fields<T> = { [K in Exclude<keyof T, "expected_version">]?: NonNullable<T[K]> };

// Route is a route as the document names it ("/api/notes/{note_id}"), and
// Query its method's query parameters.
export type Route = keyof paths;
export type Query<R extends Route, M extends keyof paths[R]> = paths[R][M] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

// Guard is the headers a guarded write carries: the version it was based
// on (If-Match) and the key of this attempt (Idempotency-Key).
type WriteHeaders = NonNullable<paths["/api/notes/{note_id}"]["patch"]["parameters"]["header"]>;
export type Guard = Required<Pick<WriteHeaders, "If-Match">> & Pick<WriteHeaders, "Idempotency-Key">;

// Problem is an RFC 9457 problem+json answer, with Foundry's members. A
// refusal that did not come from Foundry (a proxy's) may have none of
// them: see refused in client.ts.
export type Problem = Schema<"Problem">;

// VersionEntry is one version of a Note: a 412 answers those written since
// the one the change was based on, with who wrote each and the tabs it
// changed.
export type VersionEntry = Schema<"VersionEntry">;
export type Actor = Schema<"Who">;

export type Me = Schema<"Me">;

// Notes.

// Note is a Note as the list shows it.
export type Note = Schema<"NoteSummary">;
export type NotesList = Schema<"NoteList">;
export type NoteAnswer = Schema<"NoteAnswer">;
export type NoteChange = Fields<Schema<"UpdateNoteRequest">>;
// TrashedNote is a deleted Note the trash keeps until its purge_at.
export type TrashedNote = Schema<"TrashedNote">;
export type TrashList = Schema<"TrashList">;

export type TabRef = Schema<"TabRef">;
export type NoteView = Schema<"NoteView">;
export type NewTab = Schema<"CreateTabRequest">;

export type Slide = Schema<"Slide">;
export type Source = Schema<"Source">;
export type NoteFile = Schema<"File">;

// TabContent is GET /api/notes/{note_id}/tabs/{tab_id}: one tab's data, by
// its type; a sheet tab read with cells=none gives each sheet's size and no
// cells. VersionTabContent is the same tab at an older version.
export type TabContent = Schema<"TabView">;
export type Sheet = Schema<"TabSheet">;
export type VersionTabContent = Schema<"TabContent">;

// Written is what every Note write answers: the version it made (a 204
// says it in its ETag).
export type Written = Pick<Schema<"NoteWrite">, "version">;
export type WriteResult = Schema<"NoteWrite">;
export type TabCreated = Schema<"TabCreated">;
export type TabWrite = Schema<"TabWrite">;
export type TabChange = Fields<Schema<"UpdateTabRequest">>;

export type SlideFields = Fields<Schema<"UpdateSlideRequest">>;
export type NewSlide = Fields<Schema<"AddSlideRequest">>;
export type SlideWrite = Schema<"SlideWrite">;

export type SheetWritten = Schema<"SheetWrite">;
export type CellBlock = Schema<"SheetRange">;
// CellRange is the block of cells one read asks for.
export type CellRange = Required<{ [K in keyof Query<"/api/notes/{note_id}/tabs/{tab_id}/cells", "get">]: NonNullable<Query<"/api/notes/{note_id}/tabs/{tab_id}/cells", "get">[K]> }>;
export type CellsWrite = Schema<"PutCellsRequest">;
export type FormulaCell = Schema<"FormulaCell">;
export type CellFormat = Schema<"CellFormat">;
// FormatChange is a format given to a range, general taking formats away.
export type FormatChange = Schema<"FormatChange">;
export type LayoutChange = Fields<Schema<"SheetLayoutRequest">>;
export type SheetImported = Schema<"SheetImport">;

export type NewSource = Schema<"AddSourceRequest">;
export type SourceAdded = Schema<"SourceAdded">;
export type FileAdded = Schema<"FileAdded">;

// The markdown text edited live: the updates after a revision (a pull),
// change sets pushed on a revision and the answer, and presence: where
// each editor of the Note is (a Peer; the live stream's presence event
// lists them all).
export type TextUpdates = Schema<"TextUpdates">;
export type TextUpdate = Schema<"TextUpdate">;
export type TextPushBody = Schema<"PushTextRequest">;
export type TextPushed = Schema<"TextPush">;
export type PresenceBody = Schema<"PresenceRequest">;
export type Peer = Schema<"Peer">;
export type LivePresence = Schema<"LivePresence">;

// Search: GET /api/search, a page of hits, each a place in a tab with a
// snippet (the matched words between « and »).
export type SearchQuery = Query<"/api/search", "get">;
export type SearchResults = Schema<"SearchResults">;
export type SearchHit = Schema<"SearchHit">;

// History.

export type History = Schema<"History">;
export type VersionView = Schema<"VersionView">;
// VersionDiff is what a version (or a run of them) changed, tab by tab.
export type VersionDiff = Schema<"VersionDiffView">;
export type TabDiff = Schema<"TabDiff">;
export type Restored = Schema<"Restored">;

// The live stream, GET /api/events?note_id=…: one write event's data.
export type NoteEvent = Schema<"StreamEvent">;
// A write event of GET /api/live: the same, with what it did to the text.
export type LiveWrite = Schema<"LiveWrite">;

// Connections.

export type Connection = Schema<"Entry">;
export type ConnectionList = Schema<"ConnectionList">;

// Proposals.

export type CompileMessage = Schema<"CompileMessage">;
export type Proposal = Schema<"ProposalView">;
export type ProposalList = Schema<"ProposalList">;
export type ProposalFile = Schema<"ProposalFile">;
export type ProposalDetail = Schema<"ProposalDetail">;
export type Decision = Schema<"Decision">;
export type PendingCount = Schema<"PendingCount">;

// Rooms.

export type Person = Schema<"PersonRef">;
export type RoomSummary = Schema<"RoomSummary">;
export type RoomsList = Schema<"RoomsList">;
export type RoomApp = Schema<"LauncherApp">;
export type Room = Schema<"RoomView">;
export type RoomWritten = Schema<"RoomWritten">;
export type AppChange = Fields<Schema<"UpdateAppRequest">>;

// AppBundle is an approved app compiled; ok false (js empty) when it does
// not compile, and then errors says why.
export type AppBundle = Schema<"Bundle">;

// Settings: the people, the workspace and the personal access tokens.

export type Member = Schema<"Member">;
export type PeopleList = Schema<"PeopleList">;
export type Invite = Schema<"InviteRequest">;
export type Invitation = Schema<"Invitation">;
export type Role = Schema<"ChangeRoleRequest">["role"];
export type WorkspaceInfo = Schema<"WorkspaceInfo">;
export type TokenList = Schema<"TokenList">;
export type NewToken = Schema<"CreateTokenRequest">;
export type CreatedToken = Schema<"CreatedToken">;
