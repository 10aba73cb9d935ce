package auth_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

func TestTokensAreStoredAsHashesAndRevocable(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := storetest.Seed(t, s)
	users, _ := s.Users(ctx, ws)

	if _, _, err := auth.CreateToken(ctx, s, auth.NewTokenSpec{Workspace: ws, User: users[0].ID, Scopes: []string{"admin"}}); err == nil || !strings.Contains(err.Error(), "scopes") {
		t.Fatalf("unknown scope: %v", err)
	}
	noteA := storetest.Create(t, s, ws)
	secret, tok, err := auth.CreateToken(ctx, s, auth.NewTokenSpec{Workspace: ws, User: users[0].ID, Name: "t",
		Scopes: []string{auth.ScopeRead}, Notes: []string{noteA}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, auth.TokenPrefix) || tok.Hash == secret || strings.Contains(tok.Hash, secret) || tok.Hash != auth.HashToken(secret) {
		t.Fatalf("token %q stored as %q", secret, tok.Hash)
	}
	p, err := auth.Verify(ctx, s, secret)
	if err != nil || p.Workspace != ws || !p.Has(auth.ScopeRead) || p.Has(auth.ScopeWrite) || !p.CanNote(noteA) || p.CanNote("note_b") || !p.CanRoom("any") {
		t.Fatalf("principal %+v, %v", p, err)
	}
	for _, bad := range []string{"", "fdy_", "not-a-token", secret + "x"} {
		if _, err := auth.Verify(ctx, s, bad); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("Verify(%q) = %v, want ErrInvalidToken", bad, err)
		}
	}
	if err := s.RevokeToken(ctx, ws, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Verify(ctx, s, secret); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("revoked token verified: %v", err)
	}
}

func TestParseGrant(t *testing.T) {
	for in, want := range map[string][]string{
		"all": nil, " ALL ": nil, "All": nil,
		"": {}, " ": {}, ",": {}, " , ,\t": {}, "none": {}, "NONE": {},
		"a": {"a"}, " a , b,a,": {"a", "b"},
	} {
		got, err := auth.ParseGrant("notes", in)
		if err != nil || (got == nil) != (want == nil) || !slices.Equal(got, want) {
			t.Errorf("ParseGrant(%q) = %#v, %v; want %#v", in, got, err, want)
		}
	}
	for _, in := range []string{"all,a", "a,none", "a, ALL"} {
		_, err := auth.ParseGrant("rooms", in)
		var p *problem.Problem
		if !errors.As(err, &p) || p.Field != "rooms" {
			t.Errorf("ParseGrant(%q) = %v, want a refusal naming rooms", in, err)
		}
	}
}

// TestGrantsAreCheckedAndRoundTrip: both stores keep an empty grant as
// "nothing" (never as NULL, which is "everything"), and a grant naming a
// Note or Room the workspace does not have is refused by name.
func TestGrantsAreCheckedAndRoundTrip(t *testing.T) {
	ctx := context.Background()
	stores := map[string]func(t *testing.T) store.Store{
		"sqlite": func(t *testing.T) store.Store {
			s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t *testing.T) store.Store {
			u, _ := pgtest.Schema(t)
			s, err := postgres.Open(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			ws := storetest.Seed(t, s)
			other := storetest.Seed(t, s)
			users, _ := s.Users(ctx, ws)
			note := storetest.Create(t, s, ws)
			foreign := storetest.Create(t, s, other)
			spec := func(notes, rooms []string) auth.NewTokenSpec {
				return auth.NewTokenSpec{Workspace: ws, User: users[0].ID, Name: "g", Scopes: []string{auth.ScopeRead}, Notes: notes, Rooms: rooms}
			}

			secret, _, err := auth.CreateToken(ctx, s, spec([]string{}, []string{}))
			if err != nil {
				t.Fatal(err)
			}
			p, err := auth.Verify(ctx, s, secret)
			if err != nil || p.Notes == nil || len(p.Notes) != 0 || p.Rooms == nil || len(p.Rooms) != 0 || p.CanNote(note) || p.CanRoom("room_x") {
				t.Fatalf("an empty grant came back as notes %#v rooms %#v (%v): want empty, not all", p.Notes, p.Rooms, err)
			}
			toks, err := s.Tokens(ctx, ws)
			if err != nil || len(toks) != 1 || toks[0].Notes == nil || toks[0].Rooms == nil {
				t.Fatalf("Tokens: %+v %v", toks, err)
			}

			for _, c := range []struct {
				notes, rooms []string
				field        string
			}{
				{[]string{note, "note_missing"}, nil, "notes[1]"},
				{[]string{foreign}, nil, "notes[0]"},
				{nil, []string{"room_missing"}, "rooms[0]"},
				{nil, []string{note}, "rooms[0]"},
				{[]string{""}, nil, "notes[0]"},
				{[]string{"note_\x00"}, nil, "notes[0]"},
				{[]string{strings.Repeat("n", 300)}, nil, "notes[0]"},
			} {
				_, _, err := auth.CreateToken(ctx, s, spec(c.notes, c.rooms))
				var pr *problem.Problem
				if !errors.As(err, &pr) || pr.Field != c.field {
					t.Errorf("grant notes %q rooms %q: %v, want a refusal naming %s", c.notes, c.rooms, err, c.field)
				}
			}
			if toks, _ := s.Tokens(ctx, ws); len(toks) != 1 {
				t.Fatalf("refused grants stored tokens: %d", len(toks))
			}
		})
	}
}
