// Package store persists Foundry's data and owns the one guarded write that
// every door (MCP, REST, CLI, web) goes through. The mechanism lives in
// guarded.go; sqlite/ and postgres/ decide only how a transaction is run.
package store

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"foundry/internal/parts"
)

// Resource types that carry a version and take guarded writes.
const (
	TypeNote = "note"
	TypeRoom = "room"
	// TypeRepository is a repository: its document is the repository's
	// metadata and list of pinned versions; each push is a guarded write
	// that appends one version (the version's files are stored beside it,
	// as an Object of KindRepoVersion, in the same transaction).
	TypeRepository = "repository"
)

// Key scopes. A Mutation's key lives in the scope (type, id) of its resource;
// KeyScope names a separate namespace inside it, so keys chosen by agents
// can never collide with keys the server picks for people's acts.
const (
	// ScopePeople is the key scope of people's acts (approve, decline).
	// No agent-facing door sets a KeyScope, so no agent can write here.
	ScopePeople = "people"
)

// Resource is a Note, a Room or a repository: a JSON document with one
// version counter.
type Resource struct {
	Workspace string
	Type      string
	ID        string
	Owner     string
	Title     string
	Approved  bool // Notes: the owner switched on connected access
	Version   int64
	Doc       json.RawMessage
	UpdatedAt time.Time
}

// Object is a row that belongs to a workspace but has no version of its own:
// proposals (parent = room) and repository versions (parent = repository).
// Objects are written only by a guarded write (Change.Objects), in the
// transaction of the resource they belong to.
type Object struct {
	Workspace string
	Kind      string
	ID        string
	Parent    string
	Doc       json.RawMessage
	CreatedAt time.Time
}

// ObjectKey names one object.
type ObjectKey struct{ Kind, ID string }

// Object kinds.
const (
	KindProposal    = "proposal"
	KindRepoVersion = "repo_version"
	// KindRepository was the kind of repositories before they became
	// resources (TypeRepository); a migration moved every such row.
	KindRepository = "repository"
	// KindRoomDeleted marks a deleted Room: an object under the Room's own
	// ID, written by the guarded write that deletes it. The Room's row and
	// history stay; every read and write of the service treats it as gone.
	KindRoomDeleted = "room_deleted"
)

// Mutation is one guarded write. See Guarded for the order of checks.
type Mutation struct {
	Workspace string
	Type, ID  string
	// Key is the idempotency key; "" for people's acts, which are guarded by
	// ExpectedVersion alone.
	Key string
	// KeyScope, if set, puts Key in a namespace of its own within the
	// resource's (ScopePeople for people's acts): the same key string in
	// the default scope, where agents choose keys, is another key.
	KeyScope string
	// Fingerprint is what the request means (its arguments without version
	// and key). A key reused with another fingerprint is refused.
	Fingerprint string
	// ExpectedVersion is compared with the current version; 0 skips the
	// compare (only for acts with no editor state, such as approving).
	ExpectedVersion int64
	Actor           string
	// Create, if set, inserts the resource at version 1 instead of loading it;
	// Apply still runs on it.
	Create *Resource
	// CreateIfMissing makes Create conditional: an existing resource is
	// loaded (and locked) as without Create, and Create is used only when
	// there is none. Concurrent creates of one ID serialize on its row.
	CreateIfMissing bool
	// Access, if set, checks that the caller may reach the resource as
	// loaded and locked, before its key is looked at: its error is the
	// answer (e.g. not found) and nothing is written. It lets a door skip
	// reading the resource once more before the write.
	Access func(cur *Resource) error
	// Apply is the edit: a pure function of the current resource. It must not
	// do I/O. A *problem.Problem it returns is the caller's answer and nothing
	// is written.
	Apply func(cur *Resource) (*Change, error)
	// ApplyTx, if set, is used instead of Apply, for an edit that must read
	// other rows (e.g. a proposal): it reads them through tx, inside the
	// write's transaction, never from state captured before it. A store may
	// run it more than once (PostgreSQL retries a transaction), so it must
	// be a pure function of cur and what tx returns, and must not modify
	// anything it did not create.
	ApplyTx func(cur *Resource, tx TxReader) (*Change, error)
}

// TxReader reads inside a guarded write's transaction.
type TxReader interface {
	// GetObject returns the object (kind, id) as this transaction sees it,
	// or ErrNotFound.
	GetObject(kind, id string) (Object, error)
	// Parts returns the parts of the written resource last written after
	// version after (tombstones included), as this transaction sees them.
	Parts(after int64) ([]parts.Part, error)
	// VersionParts is Store.VersionPartsOf of the written resource, as this
	// transaction sees it.
	VersionParts(version int64, keys []string) ([]parts.Part, error)
}

// Change is what Apply decided.
type Change struct {
	Doc json.RawMessage // new document; nil keeps the old one
	// Parts are the resource's parts this write changed (see package
	// parts): each is stored at the new version, and history keeps what
	// it says (a snapshot or a splice), never a copy of the resource.
	Parts    []parts.Write
	Title    *string
	Approved *bool
	Result   json.RawMessage // the answer, stored under the key for replays
	Kind     string          // event kind, e.g. "tab_created"
	Changed  []string        // sub-IDs touched (tab IDs, instance IDs), for conflict reports
	Objects  []Object        // rows to upsert in the same transaction
	// DropObjects are objects of the resource's workspace to delete in the
	// same transaction (a Note taken out of the trash loses its mark).
	DropObjects []ObjectKey
	// Blobs are the hashes of the workspace's blobs this write references
	// (a file uploaded for it): marked referenced in the same transaction,
	// so the collector never removes them; one the workspace does not have
	// refuses the write (ErrBlobMissing).
	Blobs []string
	// NamedBlobs are hashes the resource names after this write and did
	// not before (a file added or restored, whichever act did it): each
	// one indexed is marked referenced in the same transaction; one not
	// indexed is left as it is (see BlobIndex).
	NamedBlobs []string
	// Search are the units of the Note's full-text index this write
	// changed (see search.go), stored in the same transaction; with
	// SearchReset every unit the Note had goes first, and the Note counts
	// as indexed whole (a new Note, one back from the trash, one deleted:
	// then Search is empty).
	Search      []SearchDoc
	SearchReset bool
	// Unchanged marks an answer that changes nothing (e.g. a source that is
	// already attached): the key is recorded so a resend replays it, but the
	// version, history and feed stay as they are.
	Unchanged bool
}

// Outcome is the answer to a guarded write.
type Outcome struct {
	Result   json.RawMessage
	Version  int64 // version after the write (or after the first write, when replayed)
	Replayed bool
	Cursor   int64 // the write's event in the feed (0 when it changed nothing)
}

// ConflictError: ExpectedVersion was not current; nothing was written.
type ConflictError struct {
	Current int64
	Changed []string // sub-IDs changed since the expected version
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("version conflict: current version is %d", e.Current)
}

// KeyReusedError: the key was committed before for a different request.
type KeyReusedError struct{ Key string }

func (e *KeyReusedError) Error() string {
	return fmt.Sprintf("idempotency key %q was already used for a different request", e.Key)
}

// ErrNotFound: no such row in this workspace.
var ErrNotFound = errors.New("not found")

// Event is one entry of the append-only per-workspace feed.
type Event struct {
	Cursor    int64     `json:"cursor"`
	Workspace string    `json:"-"`
	Type      string    `json:"resource_type"`
	ID        string    `json:"resource_id"`
	Kind      string    `json:"kind"`
	Version   int64     `json:"version,omitempty"`
	At        time.Time `json:"at"`
}

// VersionInfo is one entry of a resource's history.
type VersionInfo struct {
	Version int64     `json:"version"`
	Kind    string    `json:"kind"`
	Actor   string    `json:"actor"`
	Changed []string  `json:"changed"`
	At      time.Time `json:"at"`
	// Bytes is what history stores for this version: the document if it
	// changed, and each changed part's snapshot or splice.
	Bytes int64 `json:"bytes"`
}

// Workspace, User and Token are identity rows.
type Workspace struct {
	ID, Name  string
	CreatedAt time.Time
}

type User struct {
	ID, Workspace, Email, Name, PasswordHash, Role string
	CreatedAt                                      time.Time
}

type Token struct {
	ID        string
	Workspace string
	User      string
	Name      string
	Hash      string   // hex sha256 of the secret; the secret itself is never stored
	Scopes    []string // e.g. osfoundry:read osfoundry:write
	Notes     []string // nil = every approved Note
	Rooms     []string // nil = every cloud Room
	CreatedAt time.Time
	RevokedAt *time.Time
	LastUsed  *time.Time
}

// ListQuery selects resources of one workspace, ordered by ID.
type ListQuery struct {
	Workspace    string
	Type         string
	ApprovedOnly bool
	IDs          []string // nil = any
	Query        string   // substring of the title, case-insensitive
	// Unmarked, when set, leaves out every resource that has an object of
	// this kind under its own ID (the service marks a deleted Note so), in
	// the same statement, so a page is whole and one snapshot.
	Unmarked string
	AfterID  string
	Limit    int
	WithDoc  bool // also load each resource's document
}

// ObjectQuery selects objects of one workspace, ordered by ID.
type ObjectQuery struct {
	Workspace string
	Kind      string
	Parent    string // "" = any
	AfterID   string
	Limit     int
}

// Store is everything the use cases ask of persistence. Both SQLite and
// PostgreSQL implement all of it, and storetest holds the one contract suite
// they both pass. There is no optional method: a caller never asks a Store
// what else it can do (a type assertion would not see through a wrapper such
// as WithTokenCache), so a capability one store has is in this interface and
// both stores have it.
//
// Unless a method says otherwise: methods are safe for concurrent use; a
// read sees every write committed (on any node) before it started; a method
// given a workspace never reads or changes another workspace's rows; one
// row asked for by its key that is not there is ErrNotFound; a list is
// empty (nil), not an error, when nothing matches.
type Store interface {
	// Guarded is the one write of Notes, Rooms and repositories (see
	// Mutation for the order of checks): versioned, idempotent by key, and
	// committed with its history, objects and feed event, or not at all.
	Guarded(ctx context.Context, m Mutation) (Outcome, error)
	// Get reads a resource with its document: what a read of a Note or Room
	// starts from. It does not check the workspace; callers compare
	// Resource.Workspace.
	Get(ctx context.Context, typ, id string) (Resource, error)
	// Head is Get without the document: enough to check access and to tell
	// whether a cached copy of the document is current.
	Head(ctx context.Context, typ, id string) (Resource, error)
	// List pages through a workspace's resources in ID order (see
	// ListQuery), for listings and title searches.
	List(ctx context.Context, q ListQuery) ([]Resource, error)
	// History is every version of a resource, oldest first: the history
	// page. Prefer VersionRange when only a few versions are needed.
	History(ctx context.Context, typ, id string) ([]VersionInfo, error)
	// VersionRange is History from version from to version to (both
	// included), read by primary key: what a reader of a few new events
	// needs, at a cost independent of how long the history is.
	VersionRange(ctx context.Context, typ, id string, from, to int64) ([]VersionInfo, error)
	// VersionDoc is the resource's document at version (for a Note stored
	// by parts, its head at that version): to show or restore an old
	// version.
	VersionDoc(ctx context.Context, typ, id string, version int64) (json.RawMessage, error)
	// Parts reads the resource and, in the same snapshot, its parts last
	// written after version after (0: all of them), tombstones included.
	Parts(ctx context.Context, typ, id string, after int64) (Resource, []parts.Part, error)
	// StoreParts stores a resource still stored whole (its document) by
	// parts, at its current version, without a new version: doc becomes its
	// document (now and in that version's history) and ws its parts. It
	// does nothing and answers false if the resource is no longer at
	// version.
	StoreParts(ctx context.Context, typ, id string, version int64, doc []byte, ws []parts.Write) (bool, error)
	// VersionParts rebuilds the resource's parts as they were at version
	// (parts gone by then are left out).
	VersionParts(ctx context.Context, typ, id string, version int64) ([]parts.Part, error)
	// VersionPartsOf is VersionParts of the named parts only: what a
	// restore or a diff needs of a resource, at a cost of those parts.
	VersionPartsOf(ctx context.Context, typ, id string, version int64, keys []string) ([]parts.Part, error)
	// PartKeys are the keys of the parts written at the versions from to
	// to (both included), each once, in order: what those versions
	// changed, read by version (with the parts gone in them).
	PartKeys(ctx context.Context, typ, id string, from, to int64) ([]string, error)

	// GetObject reads one proposal or repository version. Objects have no
	// write method of their own: they are written only through Guarded
	// (Change.Objects), under their resource's lock.
	GetObject(ctx context.Context, kind, id string) (Object, error)
	// ListObjects pages through a workspace's objects of one kind in ID
	// order (see ObjectQuery): a Room's proposals, a repository's versions.
	ListObjects(ctx context.Context, q ObjectQuery) ([]Object, error)

	// Purge removes a resource of the workspace for good, in one
	// transaction: its row, its history and parts, its keys, its objects
	// (those under it and those of its own ID), its feed and horizon
	// (ErrNotFound if the workspace has no such resource). The blobs only
	// it named (in any version) become unreferenced, so the blob collector
	// reclaims them after its grace period; a blob another resource of the
	// workspace names, now or in its history, stays referenced.
	Purge(ctx context.Context, workspace, typ, id string) (PurgeReport, error)

	// Search finds the units of a workspace's Notes whose words match a
	// query (see SearchQuery and SearchHit for what and in which order).
	Search(ctx context.Context, q SearchQuery) ([]SearchHit, error)
	// IndexNote replaces Note id's whole index with docs, if it is still
	// at version (answering false otherwise, having done nothing), and
	// marks it indexed at SearchFormat.
	IndexNote(ctx context.Context, id string, version int64, docs []SearchDoc) (bool, error)
	// Unindexed pages, by ID after afterID, through every workspace's
	// Notes not indexed whole at SearchFormat (ID, workspace and version
	// only).
	Unindexed(ctx context.Context, afterID string, limit int) ([]Resource, error)

	// Events are the feed of (typ, id) after cursor after, oldest first, at
	// most limit: what polls and live updates read.
	Events(ctx context.Context, workspace, typ, id string, after int64, limit int) ([]Event, error)
	// LastCursor is the cursor of the newest event of (typ, id): polling
	// after it sees only what happens next.
	LastCursor(ctx context.Context, workspace, typ, id string) (int64, error)
	// EventHorizon is the cursor of the newest pruned event of (typ, id), 0
	// if none was pruned: a poll after an older cursor may have missed
	// events (cursor_expired).
	EventHorizon(ctx context.Context, typ, id string) (int64, error)
	// Prune deletes idempotency keys and events older than the store's
	// Retention before now, in bounded transactions (see Base.Prune). Each
	// store also runs it in the background until Close.
	Prune(ctx context.Context, now time.Time) (PruneReport, error)
	// Wait returns a channel that is closed at the next committed write to
	// (typ, id) on any node, and a func to stop waiting.
	Wait(typ, id string) (<-chan struct{}, func())
	// OnChange calls fn after every committed write to a Note or Room on any
	// node (fn must not block); the returned func stops it.
	OnChange(fn func(typ, id string)) func()

	// Blobs is the store of file bytes kept beside the resources (see
	// Blobs): the files tab names them by hash.
	Blobs() Blobs

	// CreateWorkspace creates w and its owner in one transaction.
	CreateWorkspace(ctx context.Context, w Workspace, owner User) error
	// CreateFirstWorkspace creates w and its owner only if there is no
	// workspace yet, in one transaction that nodes starting together
	// serialize on (PostgreSQL: the migrations' advisory lock). created
	// says whether it did; if not, nothing was written.
	CreateFirstWorkspace(ctx context.Context, w Workspace, owner User) (created bool, err error)
	// Workspaces lists every workspace, oldest first: the server's own
	// workspace is the first.
	Workspaces(ctx context.Context) ([]Workspace, error)
	// Users lists a workspace's people, oldest first: the people page.
	Users(ctx context.Context, workspace string) ([]User, error)
	// CreateToken stores a personal access token (its hash, never the
	// secret).
	CreateToken(ctx context.Context, t Token) error
	// TokenByHash finds a token, revoked ones included, by the hash of
	// its secret: what every agent call is authenticated by.
	TokenByHash(ctx context.Context, hash string) (Token, error)
	// Tokens lists a workspace's tokens, revoked ones included, oldest
	// first.
	Tokens(ctx context.Context, workspace string) ([]Token, error)
	// RevokeToken revokes a live token of the workspace (ErrNotFound if
	// there is none): from then on TokenByHash answers it revoked.
	RevokeToken(ctx context.Context, workspace, id string) error

	Identity

	// Close stops the store's background work and closes its database; no
	// method may be called after it.
	Close() error
}

// PurgeReport is what one Purge did.
type PurgeReport struct {
	Versions     int64    // versions of history removed
	Unreferenced []string // blobs now unreferenced (sorted)
}

// NewID returns a random ID with a readable prefix, e.g. "note_k3j9x0c2q1p8".
func NewID(prefix string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}
