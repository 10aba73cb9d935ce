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
	"strconv"
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
	waits waitState // concurrent long polls (events.go)
}

// New returns a Service over s.
func New(s store.Store) *Service { return &Service{Store: s, Now: time.Now} }

// Written is the answer to a guarded write: the stored result (the first one
// when replayed) with "replayed" and "version" set.
type Written map[string]any

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

// guarded runs m and turns store outcomes into answers or problems.
func (s *Service) guarded(ctx context.Context, m store.Mutation) (Written, error) {
	out, err := s.Store.Guarded(ctx, m)
	if err != nil {
		return nil, storeProblem(err, m)
	}
	var w Written
	if err := json.Unmarshal(out.Result, &w); err != nil {
		return nil, fmt.Errorf("stored result: %w", err)
	}
	w["replayed"] = out.Replayed
	if out.Cursor > 0 {
		w["cursor"] = encodeCursor("e", strconv.FormatInt(out.Cursor, 10)) // poll_resource_events from here sees what follows this write
	}
	return w, nil
}

// storeProblem translates the store's refusals into what the caller can act on.
func storeProblem(err error, m store.Mutation) error {
	var ce *store.ConflictError
	var kr *store.KeyReusedError
	switch {
	case errors.As(err, &ce):
		what := "tab"
		field := "changed_tab_ids"
		if m.Type == store.TypeRoom {
			what, field = "app", "changed_ids"
		}
		return problem.New(problem.Conflict, "expected_version",
			"the %s changed since version %d; it is at version %d now. Read the %s again, redo your change on what is there now, and write with expected_version %d and a NEW idempotency_key. Do not just resend the same payload with the new version: that overwrites the other edit.",
			m.Type, m.ExpectedVersion, ce.Current, what, ce.Current).
			With("current_version", ce.Current).With(field, ce.Changed)
	case errors.As(err, &kr):
		return problem.New(problem.KeyReused, "idempotency_key",
			"idempotency_key %q was already used for a different request in this %s. Use a fresh key for a different change; resend the same key only with the same arguments.", problem.Excerpt(kr.Key), m.Type)
	case errors.Is(err, store.ErrNotFound):
		return notFound(m.Type, m.ID)
	}
	return err
}

func notFound(typ, id string) *problem.Problem {
	field := typ + "_id"
	hint := "list_notes shows the approved Notes this connection can reach"
	if typ == store.TypeRoom {
		hint = "list_rooms shows the cloud Rooms this connection can reach; Local Rooms are unavailable"
	}
	return problem.New(problem.NotFound, field, "%s %q was not found; %s", typ, problem.Excerpt(id), hint)
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
