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
)

// Resource types that carry a version and take guarded writes.
const (
	TypeNote = "note"
	TypeRoom = "room"
)

// Resource is a Note or a Room: a JSON document with one version counter.
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
// proposals (parent = room), repositories, repository versions (parent =
// repository).
type Object struct {
	Workspace string
	Kind      string
	ID        string
	Parent    string
	Doc       json.RawMessage
	CreatedAt time.Time
}

// Object kinds.
const (
	KindProposal    = "proposal"
	KindRepository  = "repository"
	KindRepoVersion = "repo_version"
)

// Mutation is one guarded write. See Guarded for the order of checks.
type Mutation struct {
	Workspace string
	Type, ID  string
	// Key is the idempotency key; "" for people's acts, which are guarded by
	// ExpectedVersion alone.
	Key string
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
	// Apply is the edit: a pure function of the current resource. It must not
	// do I/O. A *problem.Problem it returns is the caller's answer and nothing
	// is written.
	Apply func(cur *Resource) (*Change, error)
}

// Change is what Apply decided.
type Change struct {
	Doc      json.RawMessage // new document; nil keeps the old one
	Title    *string
	Approved *bool
	Result   json.RawMessage // the answer, stored under the key for replays
	Kind     string          // event kind, e.g. "tab_created"
	Changed  []string        // sub-IDs touched (tab IDs, instance IDs), for conflict reports
	Objects  []Object        // rows to upsert in the same transaction
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
	AfterID      string
	Limit        int
}

// ObjectQuery selects objects of one workspace, ordered by ID.
type ObjectQuery struct {
	Workspace string
	Kind      string
	Parent    string // "" = any
	AfterID   string
	Limit     int
}

// Store is what the services need. Both SQLite and PostgreSQL implement it,
// and storetest holds the one contract suite they both pass.
type Store interface {
	Guarded(ctx context.Context, m Mutation) (Outcome, error)
	Get(ctx context.Context, typ, id string) (Resource, error)
	// Head is Get without the document: enough to check access and to tell
	// whether a cached copy of the document is current.
	Head(ctx context.Context, typ, id string) (Resource, error)
	List(ctx context.Context, q ListQuery) ([]Resource, error)
	History(ctx context.Context, typ, id string) ([]VersionInfo, error)
	VersionDoc(ctx context.Context, typ, id string, version int64) (json.RawMessage, error)

	PutObjects(ctx context.Context, objs ...Object) error
	GetObject(ctx context.Context, kind, id string) (Object, error)
	ListObjects(ctx context.Context, q ObjectQuery) ([]Object, error)

	Events(ctx context.Context, workspace, typ, id string, after int64, limit int) ([]Event, error)
	// LastCursor is the cursor of the newest event of (typ, id): polling
	// after it sees only what happens next.
	LastCursor(ctx context.Context, workspace, typ, id string) (int64, error)
	// Wait returns a channel that is closed at the next committed write to
	// (typ, id) on any node, and a func to stop waiting.
	Wait(typ, id string) (<-chan struct{}, func())
	// OnChange calls fn after every committed write to a Note or Room on any
	// node (fn must not block); the returned func stops it.
	OnChange(fn func(typ, id string)) func()

	CreateWorkspace(ctx context.Context, w Workspace, owner User) error
	Workspaces(ctx context.Context) ([]Workspace, error)
	Users(ctx context.Context, workspace string) ([]User, error)
	CreateToken(ctx context.Context, t Token) error
	TokenByHash(ctx context.Context, hash string) (Token, error)
	Tokens(ctx context.Context, workspace string) ([]Token, error)
	RevokeToken(ctx context.Context, workspace, id string) error

	Close() error
}

// NewID returns a random ID with a readable prefix, e.g. "note_k3j9x0c2q1p8".
func NewID(prefix string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}
