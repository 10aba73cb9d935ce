package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"foundry/internal/auth"
)

// TestConnectionNames: GET /api/connections names what each grant lists —
// the Notes' titles and the Rooms' names, by ID — so that a person reads
// "Welcome" rather than an ID; a Note deleted since is absent from the
// names (its ID stays in the grant), a grant of everything names nothing,
// and names is never null. On SQLite and PostgreSQL.
func TestConnectionNames(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		ctx := context.Background()
		created := e.do(t, req{method: "POST", path: "/api/notes", body: map[string]any{"title": "Soon gone ✂"}})
		if created.status != http.StatusCreated && created.status != http.StatusOK {
			t.Fatalf("create a Note: %d %s", created.status, created.raw)
		}
		gone := created.body["id"].(string)
		_, narrow, err := auth.CreateToken(ctx, e.Server.Store, auth.NewTokenSpec{
			Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: "narrow", Scopes: []string{auth.ScopeRead},
			Notes: []string{e.NoteID, gone}, Rooms: []string{e.RoomID},
		})
		if err != nil {
			t.Fatal(err)
		}
		_, wide, err := auth.CreateToken(ctx, e.Server.Store, auth.NewTokenSpec{
			Workspace: e.Owner.Workspace.ID, User: e.Owner.User.ID, Name: "wide", Scopes: []string{auth.ScopeRead},
		})
		if err != nil {
			t.Fatal(err)
		}
		del := e.do(t, req{method: "DELETE", path: "/api/notes/" + gone, header: map[string]string{"If-Match": fmt.Sprintf(`"%v"`, created.body["version"])}})
		if del.status != http.StatusNoContent && del.status != http.StatusOK {
			t.Fatalf("delete the Note: %d %s", del.status, del.raw)
		}

		r := e.do(t, req{method: "GET", path: "/api/connections"})
		if r.status != http.StatusOK {
			t.Fatalf("GET /api/connections: %d %s", r.status, r.raw)
		}
		byID := map[string]map[string]any{}
		for _, c := range r.body["connections"].([]any) {
			c := c.(map[string]any)
			byID[c["id"].(string)] = c
		}
		n := byID[narrow.ID]
		if n == nil {
			t.Fatalf("the narrow token is not listed: %s", r.raw)
		}
		names, ok := n["names"].(map[string]any)
		if !ok {
			t.Fatalf("names of the narrow token = %#v, want an object", n["names"])
		}
		if names[e.NoteID] != "Welcome" || names[e.RoomID] != "Team room" || len(names) != 2 {
			t.Errorf("names = %v, want the Note %s as Welcome and the Room %s as Team room, and not the deleted Note", names, e.NoteID, e.RoomID)
		}
		if fmt.Sprint(n["notes"]) != fmt.Sprint([]any{e.NoteID, gone}) {
			t.Errorf("notes = %v: the grant still lists the deleted Note's ID", n["notes"])
		}
		w := byID[wide.ID]
		if names, ok := w["names"].(map[string]any); !ok || len(names) != 0 || w["notes"] != nil || w["rooms"] != nil {
			t.Errorf("a token of every Note and Room: notes %v, rooms %v, names %#v; want null, null, {}", w["notes"], w["rooms"], w["names"])
		}
	})
}
