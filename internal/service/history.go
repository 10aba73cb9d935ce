package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// A Note's past: its versions with who wrote each, the Note as it was at
// one version, one tab of it, and what changed since a version (what a
// conflict is about). Versions are rebuilt from history as a restore
// rebuilds them.

// Actor is who wrote a version: a person, a personal access token, or a
// connected OAuth client, by name.
type Actor struct {
	Kind string `json:"kind"` // "person", "token", "client" or "unknown"
	ID   string `json:"id"`
	Name string `json:"name"`
}

// VersionEntry is one version of a Note's history, its writer named.
type VersionEntry struct {
	Version int64
	Kind    string // what the write was (tab_edited, restored, …)
	Who     Actor
	At      time.Time
	Changed []string // the tabs it changed
	Bytes   int64    // what history stores for it
}

// History is one page of a Note's versions, newest first.
type History struct {
	NoteID     string
	Version    int64 // the Note's current version
	Versions   []VersionEntry
	NextCursor string // the page of older versions; "" on the page of version 1
}

// HistoryArgs ask for one page of a Note's history: the newest versions,
// or with Cursor those older than the page before.
type HistoryArgs struct {
	NoteID string `json:"note_id"`
	Page
}

// NoteHistory is a page of the history of a Note c may see, newest first,
// read by version range: a page costs the same however long the history.
func (s *Service) NoteHistory(ctx context.Context, c Caller, a HistoryArgs) (History, error) {
	limit, err := pageLimit(a.Limit)
	if err != nil {
		return History{}, err
	}
	below, err := decodeCursor(a.Cursor, "h")
	if err != nil {
		return History{}, err
	}
	r, err := s.noteHead(ctx, c, a.NoteID)
	if err != nil {
		return History{}, err
	}
	before := r.Version + 1
	if below != "" {
		// A cursor names the oldest version of the page before: 2 … now.
		n, _ := strconv.ParseInt(below, 10, 64)
		if n < 2 || n > r.Version {
			return History{}, badCursor()
		}
		before = n
	}
	from := max(1, before-int64(limit))
	vs, err := s.Store.VersionRange(ctx, store.TypeNote, r.ID, from, before-1)
	if err != nil {
		return History{}, err
	}
	slices.Reverse(vs)
	out, err := s.entries(ctx, c.Workspace, vs)
	h := History{NoteID: r.ID, Version: r.Version, Versions: out}
	if from > 1 {
		h.NextCursor = encodeCursor("h", strconv.FormatInt(from, 10))
	}
	return h, err
}

// MaxConflictChanges bounds the versions ChangesSince lists.
const MaxConflictChanges = 50

// ChangesSince is what changed Note noteID after version since and who
// changed it, newest last (at most MaxConflictChanges versions, the newest
// ones): what a refused change conflicts with.
func (s *Service) ChangesSince(ctx context.Context, c Caller, noteID string, since int64) ([]VersionEntry, error) {
	r, err := s.noteHead(ctx, c, noteID)
	if err != nil {
		return nil, err
	}
	from := max(since+1, r.Version-MaxConflictChanges+1)
	vs, err := s.Store.VersionRange(ctx, store.TypeNote, noteID, from, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	return s.entries(ctx, c.Workspace, vs)
}

func (s *Service) entries(ctx context.Context, ws string, vs []store.VersionInfo) ([]VersionEntry, error) {
	actors := make([]string, 0, len(vs))
	for _, v := range vs {
		actors = append(actors, v.Actor)
	}
	names, err := s.Actors(ctx, ws, actors)
	if err != nil {
		return nil, err
	}
	out := make([]VersionEntry, 0, len(vs))
	for _, v := range vs {
		out = append(out, VersionEntry{Version: v.Version, Kind: v.Kind, Who: names.Of(v.Actor), At: v.At, Changed: nonNilIDs(v.Changed), Bytes: v.Bytes})
	}
	return out, nil
}

// Actors names the actors of history and the feed ("user:<id>",
// "token:<id>") of workspace ws, in one lookup.
func (s *Service) Actors(ctx context.Context, ws string, actors []string) (ActorNames, error) {
	m, err := s.Store.Actors(ctx, ws, actors)
	if err != nil {
		return nil, err
	}
	out := make(ActorNames, len(m))
	for k, a := range m {
		out[k] = Actor{Kind: a.Kind, ID: a.ID, Name: a.Name}
	}
	return out, nil
}

// ActorNames are actors by the string history records.
type ActorNames map[string]Actor

// Of is actor by name; one the lookup did not find (a person or token
// since removed) is named by what the string says.
func (n ActorNames) Of(actor string) Actor {
	if a, ok := n[actor]; ok {
		return a
	}
	kind, id, _ := strings.Cut(actor, ":")
	a := Actor{Kind: "unknown", ID: id, Name: actor}
	if kind == "user" {
		a.Kind = "person"
	}
	return a
}

// NoteVersion is a Note's tab strip as it was at one version.
type NoteVersion struct {
	NoteID         string
	Title          string
	Version        int64 // the version shown
	CurrentVersion int64 // the Note's version now, the one a restore is based on
	Tabs           []note.TabRef
}

// checkVersion refuses a version Note r never had, naming version.
func checkVersion(r store.Resource, version int64) error {
	if version < 1 || version > r.Version {
		return problem.New(problem.Invalid, "version", "give a version between 1 and %d (the Note is at version %d); got %d", r.Version, r.Version, version).With("current_version", r.Version)
	}
	return nil
}

// versionGone is the answer to a version history no longer holds.
func versionGone(noteID string, version int64) error {
	return problem.New(problem.NotFound, "version", "version %d of Note %s is no longer kept: list the versions there are in its history", version, problem.Excerpt(noteID))
}

// noteAtFor is Note noteID as it was at version, for a caller who may see
// the Note now (r is the Note as it is now). A version the Note never had,
// or one its history no longer holds, is refused naming version.
func (s *Service) noteAtFor(ctx context.Context, c Caller, noteID string, version int64) (store.Resource, note.Doc, error) {
	r, err := s.noteHead(ctx, c, noteID)
	if err != nil {
		return store.Resource{}, note.Doc{}, err
	}
	if err := checkVersion(r, version); err != nil {
		return store.Resource{}, note.Doc{}, err
	}
	d, err := s.NoteAt(ctx, noteID, version)
	var pr *problem.Problem
	if errors.As(err, &pr) && pr.Code == problem.NotFound {
		return store.Resource{}, note.Doc{}, versionGone(noteID, version)
	}
	return r, d, err
}

// ReadNoteAt is the tab strip of a Note c may see as it was at version.
func (s *Service) ReadNoteAt(ctx context.Context, c Caller, noteID string, version int64) (NoteVersion, error) {
	r, d, err := s.noteAtFor(ctx, c, noteID, version)
	if err != nil {
		return NoteVersion{}, err
	}
	return NoteVersion{NoteID: r.ID, Title: d.Title, Version: version, CurrentVersion: r.Version, Tabs: note.Refs(&d)}, nil
}

// ReadTabAt is one tab of a Note c may see as it was at version, as
// ReadNoteTab gives a tab now (a files tab: its metadata only). Its
// Version is the version asked for.
func (s *Service) ReadTabAt(ctx context.Context, c Caller, noteID string, version int64, tabID string) (TabContent, error) {
	if err := CheckID("tab_id", tabID); err != nil {
		return TabContent{}, err
	}
	r, d, err := s.noteAtFor(ctx, c, noteID, version)
	if err != nil {
		return TabContent{}, err
	}
	res, err := tabContent(r.ID, version, &d, tabID)
	var pr *problem.Problem
	if errors.As(err, &pr) && pr.Code == note.CodeUnknownTab {
		pr.Message = fmt.Sprintf("version %d of the Note has no tab %s: list that version's tabs", version, note.Quote(tabID))
	}
	return res, err
}

// NoteAt rebuilds Note id as it was at version, from history, with no
// access check (the callers check).
func (s *Service) NoteAt(ctx context.Context, id string, version int64) (note.Doc, error) {
	head, err := s.Store.VersionDoc(ctx, store.TypeNote, id, version)
	if err != nil {
		return note.Doc{}, storeProblem(err, store.Mutation{Type: store.TypeNote, ID: id})
	}
	var ps []note.Part
	if note.IsHead(head) {
		if ps, err = s.Store.VersionParts(ctx, store.TypeNote, id, version); err != nil {
			return note.Doc{}, err
		}
	}
	d, err := note.Assemble(head, ps, nil)
	if err != nil {
		return note.Doc{}, fmt.Errorf("note %s version %d: %w", id, version, err)
	}
	return d, nil
}

// DiffArgs ask what one version of a Note changed: against the version
// before it, or with Since against an older version (what a run of
// versions changed together).
type DiffArgs struct {
	NoteID  string `json:"note_id"`
	Version int64  `json:"version"`
	Since   int64  `json:"since"` // 0: the version before Version
}

// VersionChanges is what changed from version Since to Version (Since 0:
// Version is the Note's first).
type VersionChanges struct {
	NoteID         string
	Version        int64
	Since          int64
	CurrentVersion int64
	note.VersionDiff
}

// DiffVersion is what a version of a Note c may see changed, read from
// what history stores of the versions in between: their heads, and the
// parts they wrote as they were on either side (bounded by the parts
// written, not by the Note).
func (s *Service) DiffVersion(ctx context.Context, c Caller, a DiffArgs) (VersionChanges, error) {
	r, err := s.noteHead(ctx, c, a.NoteID)
	if err != nil {
		return VersionChanges{}, err
	}
	if err := checkVersion(r, a.Version); err != nil {
		return VersionChanges{}, err
	}
	since := a.Since
	if since == 0 {
		since = a.Version - 1
	} else if since < 1 || since >= a.Version {
		return VersionChanges{}, problem.New(problem.Invalid, "since", "give a version older than %d to compare it with (1 … %d), or leave since out for the version before it; got %d", a.Version, a.Version-1, since)
	}
	head := func(v int64) ([]byte, error) {
		h, err := s.Store.VersionDoc(ctx, store.TypeNote, r.ID, v)
		if errors.Is(err, store.ErrNotFound) {
			return nil, versionGone(r.ID, v)
		}
		return h, err
	}
	after, err := head(a.Version)
	if err != nil {
		return VersionChanges{}, err
	}
	var before []byte
	if since >= 1 {
		if before, err = head(since); err != nil {
			return VersionChanges{}, err
		}
	}
	var sb, sa note.Side
	if note.IsHead(after) && (before == nil || note.IsHead(before)) {
		written, err := s.Store.PartKeys(ctx, store.TypeNote, r.ID, since+1, a.Version)
		if err != nil {
			return VersionChanges{}, err
		}
		kb, ka, err := note.DiffReads(before, after, written)
		if err != nil {
			return VersionChanges{}, fmt.Errorf("note %s: %w", r.ID, err)
		}
		sb.Head, sa.Head = before, after
		if before != nil {
			if sb.Parts, err = s.Store.VersionPartsOf(ctx, store.TypeNote, r.ID, since, kb); err != nil {
				return VersionChanges{}, err
			}
		}
		if sa.Parts, err = s.Store.VersionPartsOf(ctx, store.TypeNote, r.ID, a.Version, ka); err != nil {
			return VersionChanges{}, err
		}
	} else {
		// A version stored whole, before Notes were stored by parts: both
		// sides are rebuilt and compared whole.
		side := func(v int64) (note.Side, error) {
			d, err := s.NoteAt(ctx, r.ID, v)
			if err != nil {
				return note.Side{}, err
			}
			return note.Stored(&d)
		}
		if since >= 1 {
			if sb, err = side(since); err != nil {
				return VersionChanges{}, err
			}
		}
		if sa, err = side(a.Version); err != nil {
			return VersionChanges{}, err
		}
	}
	d, err := note.DiffVersions(sb, sa)
	if err != nil {
		return VersionChanges{}, fmt.Errorf("note %s: versions %d to %d: %w", r.ID, since, a.Version, err)
	}
	return VersionChanges{NoteID: r.ID, Version: a.Version, Since: since, CurrentVersion: r.Version, VersionDiff: d}, nil
}
