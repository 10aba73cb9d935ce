// Package service holds the use cases every door shares: who may do what,
// translating store outcomes into answers, and building the guarded writes.
// MCP tools and REST handlers call these; nothing here speaks a transport.
package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"foundry/internal/problem"
	"foundry/internal/store"
)

// Service bundles the use cases over one store.
type Service struct {
	Store store.Store
	Now   func() time.Time
	docs  docCache
	heads headCache
	waits waitState // concurrent long polls (events.go)
	live  live      // the live fan-out (live.go)
	stats tally     // writes by outcome, long polls waiting (outcomes.go)
	// MaxWorkspaceBytes bounds what one workspace's files hold, uploads
	// not yet in a Note included (storage.go); 0: no limit.
	MaxWorkspaceBytes int64
	uploads           uploading // bytes of uploads being stored, per workspace (storage.go)
	// searchOff leaves the search index out of writes: only for measuring
	// what the index costs a write (the benchmarks set it).
	searchOff bool
}

// New returns a Service over s.
func New(s store.Store) *Service { return &Service{Store: s, Now: time.Now} }

// Written is what every guarded write answers besides its own result:
// whether it is the first result replayed (the same key and arguments sent
// again), and the cursor after the write, to poll what followed it.
type Written struct {
	Replayed bool   `json:"replayed"`
	Cursor   string `json:"cursor,omitempty"`
}

func (w *Written) written() *Written { return w }

// writeResult is a typed result of a guarded write (it embeds Written).
type writeResult[T any] interface {
	*T
	written() *Written
}

// Page is what every paged list takes: the cursor a page returned (none:
// the first page) and how many entries (0: DefaultPage).
type Page struct {
	Cursor string `json:"cursor"`
	Limit  int    `json:"limit"`
}

// Limits shared by every list.
const (
	MinPage, MaxPage, DefaultPage = 1, 50, 20
	MinKey, MaxKey                = 8, 128
)

// fingerprint is what a request means: its arguments without version and key.
func fingerprint(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// guarded runs m and turns store outcomes into answers or problems: the
// stored result (the first one when replayed) decoded as T, with Written
// filled in.
func guarded[T any, PT writeResult[T]](ctx context.Context, s *Service, m store.Mutation) (T, error) {
	v, _, err := guardedOut[T, PT](ctx, s, m)
	return v, err
}

// guardedOut is guarded that also answers the version after the write.
func guardedOut[T any, PT writeResult[T]](ctx context.Context, s *Service, m store.Mutation) (T, int64, error) {
	out, err := s.guardedWrite(ctx, m)
	return outcomeOf[T, PT](out, err, m)
}

// outcomeOf is what guardedOut answers for the store's outcome of m.
func outcomeOf[T any, PT writeResult[T]](out store.Outcome, err error, m store.Mutation) (T, int64, error) {
	var v T
	if err != nil {
		return v, 0, storeProblem(err, m)
	}
	if err := json.Unmarshal(out.Result, &v); err != nil {
		return v, 0, fmt.Errorf("stored result: %w", err)
	}
	w := PT(&v).written()
	w.Replayed = out.Replayed
	w.Cursor = ""
	if out.Cursor > 0 {
		w.Cursor = eventCursor(out.Cursor) // poll_resource_events from here sees what follows this write
	}
	return v, out.Version, nil
}

// storeProblem translates the store's refusals into what the caller can act on.
func storeProblem(err error, m store.Mutation) error {
	var ce *store.ConflictError
	var kr *store.KeyReusedError
	switch {
	case errors.As(err, &ce):
		return conflict(m, ce)
	case errors.As(err, &kr):
		return problem.New(problem.KeyReused, "idempotency_key",
			"idempotency_key %q was already used for a different request in this %s. Use a fresh key for a different change; resend the same key only with the same arguments.", problem.Excerpt(kr.Key), m.Type)
	case errors.Is(err, store.ErrNotFound):
		return notFound(m.Type, m.ID)
	}
	return err
}

// conflict says what is true of a stale expected_version: the resource
// moved on since it (behind), or it names a version the resource never had
// (ahead). What to do next is each door's to say: redoing an edit is not
// resending a creation.
func conflict(m store.Mutation, ce *store.ConflictError) *problem.Problem {
	field := "changed_tab_ids"
	if m.Type == store.TypeRoom {
		field = "changed_ids"
	}
	var p *problem.Problem
	if m.ExpectedVersion > ce.Current {
		p = problem.New(problem.Conflict, "expected_version", "expected_version %d is ahead of the %s, which is at version %d",
			m.ExpectedVersion, m.Type, ce.Current)
	} else {
		p = problem.New(problem.Conflict, "expected_version", "the %s changed since version %d; it is at version %d now",
			m.Type, m.ExpectedVersion, ce.Current)
	}
	return p.With("current_version", ce.Current).With("expected_version", m.ExpectedVersion).With(field, nonNilIDs(ce.Changed))
}

func nonNilIDs(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// notFound is the one answer for a resource that does not exist and for one
// the caller may not reach: a caller never learns which.
func notFound(typ, id string) *problem.Problem {
	return problem.New(problem.NotFound, typ+"_id", "%s %q was not found", typ, problem.Excerpt(id))
}

// checkKey enforces the key's length (in characters, as the message says)
// and characters where the schema can't (REST callers).
func checkKey(key string) error {
	if n := utf8.RuneCountInString(key); n < MinKey || n > MaxKey {
		return problem.New(problem.Invalid, "idempotency_key", "must be %d–%d characters (got %d); derive it from what the change means, e.g. a hash of its content", MinKey, MaxKey, n)
	}
	return CheckID("idempotency_key", key)
}

// CheckID is the character rule of every identifier a client sends: IDs
// (note_id, tab_id, …), idempotency keys and cursors. They take printable
// characters only: no control characters (NUL included), no format
// characters (bidi controls, zero-width joiners), no line or paragraph
// separators, no invalid UTF-8 or surrogates, no U+FFFD (what a decoder
// makes of a lone surrogate). Every door calls it before any store call,
// so both stores see the same input and give the same answer.
func CheckID(field, v string) error {
	if i, r, ok := BadIDRune(v); !ok {
		var what string
		switch {
		case r != utf8.RuneError:
			what = fmt.Sprintf("%s (U+%04X)", runeClass(r), r)
		case strings.HasPrefix(v[i:], "\uFFFD"):
			what = "U+FFFD (what a decoder makes of a lone surrogate or an invalid byte)"
		default:
			what = "an invalid UTF-8 byte"
		}
		return problem.New(problem.Invalid, field, "contains %s at character %d; IDs, keys and cursors take printable characters only: send the exact value Foundry returned (or, for a key, one derived from what the change means)",
			what, utf8.RuneCountInString(v[:i])+1)
	}
	return nil
}

// BadIDRune returns the byte offset and rune of the first character CheckID
// refuses, and ok=false; ok=true when there is none.
func BadIDRune(v string) (int, rune, bool) {
	for i, r := range v {
		switch {
		case r == utf8.RuneError, // invalid UTF-8, or U+FFFD itself
			unicode.IsControl(r),                                 // Cc: C0, DEL, C1
			unicode.Is(unicode.Cf, r),                            // format: bidi controls, ZWJ, BOM, …
			unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r), // U+2028, U+2029
			unicode.Is(unicode.Cs, r), // surrogates (never valid in UTF-8)
			unicode.Is(unicode.Noncharacter_Code_Point, r):
			return i, r, false
		}
	}
	return 0, 0, true
}

func runeClass(r rune) string {
	switch {
	case unicode.IsControl(r):
		return "a control character"
	case unicode.Is(unicode.Bidi_Control, r):
		return "a bidi control character"
	case unicode.Is(unicode.Cf, r):
		return "an invisible format character"
	case unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return "a line separator"
	}
	return "a character that is not allowed"
}

func pageLimit(limit int) (int, error) {
	if limit == 0 {
		return DefaultPage, nil
	}
	if limit < MinPage || limit > MaxPage {
		return 0, problem.New(problem.Invalid, "limit", "must be between %d and %d (got %d); page with cursor", MinPage, MaxPage, limit)
	}
	return limit, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain data is marshaled here
	}
	return b
}
