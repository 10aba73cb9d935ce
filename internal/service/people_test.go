package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/service"
)

func codeOf(err error) string {
	var p *problem.Problem
	if errors.As(err, &p) {
		return p.Code
	}
	return ""
}

// TestPeopleAndWorkspaceActs: owners invite, change roles, remove and
// rename; members see the people and their own tokens only; the last
// owner is never demoted or removed.
func TestPeopleAndWorkspaceActs(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		inv, err := f.svc.InvitePerson(ctx, f.person, service.InviteArgs{Email: " Ada@Example.com", Role: "member"}, "https://foundry.example.com/")
		if err != nil {
			t.Fatal(err)
		}
		if inv.Person.Email != "ada@example.com" || inv.Person.Status != service.StatusInvited || !strings.HasPrefix(inv.Link, "https://foundry.example.com/setup?token=") || inv.ExpiresAt == nil {
			t.Fatalf("invitation: %+v", inv)
		}
		member := service.Person(f.ws, inv.Person.ID, "member")
		for i, err := range []error{
			func() error {
				_, err := f.svc.InvitePerson(ctx, member, service.InviteArgs{Email: "eve@example.com"}, "http://x")
				return err
			}(),
			func() error { _, err := f.svc.ChangeRole(ctx, member, inv.Person.ID, "owner"); return err }(),
			func() error { _, err := f.svc.RemovePerson(ctx, member, f.owner); return err }(),
			f.svc.RenameWorkspace(ctx, member, "Mine"),
		} {
			if codeOf(err) != service.OwnerOnly {
				t.Errorf("member act %d: %v, want %s", i, err, service.OwnerOnly)
			}
		}
		if _, err := f.svc.InvitePerson(ctx, f.person, service.InviteArgs{Email: "not-an-email"}, "http://x"); codeOf(err) != problem.Invalid || !strings.Contains(err.Error(), "email") {
			t.Errorf("bad email: %v", err)
		}
		if _, err := f.svc.InvitePerson(ctx, f.person, service.InviteArgs{Email: "x@example.com", Role: "admin"}, "http://x"); codeOf(err) != problem.Invalid || !strings.Contains(err.Error(), "role") {
			t.Errorf("bad role: %v", err)
		}
		people, err := f.svc.People(ctx, member)
		if err != nil || len(people) != 2 {
			t.Fatalf("a member's people list: %v %+v", err, people)
		}
		if _, err := f.svc.ChangeRole(ctx, f.person, f.owner, "member"); codeOf(err) != service.LastOwner {
			t.Errorf("demoting the last owner: %v", err)
		}
		if _, err := f.svc.RemovePerson(ctx, f.person, f.owner); codeOf(err) != service.LastOwner {
			t.Errorf("removing the last owner: %v", err)
		}
		if m, err := f.svc.ChangeRole(ctx, f.person, inv.Person.ID, "owner"); err != nil || m.Role != "owner" {
			t.Fatalf("promoting: %v %+v", err, m)
		}
		if _, err := f.svc.ChangeRole(ctx, f.person, inv.Person.ID, "member"); err != nil {
			t.Fatal(err)
		}

		// Tokens: a default name, never "cli"; a member sees and revokes only their own.
		_, mine, err := f.svc.CreateToken(ctx, member, service.TokenSpec{Scopes: []string{auth.ScopeRead}})
		if err != nil || mine.Name != "Personal token 1" {
			t.Fatalf("a member's first token: %v %q", err, mine.Name)
		}
		_, ownerTok, err := f.svc.CreateToken(ctx, f.person, service.TokenSpec{Name: "  Laptop ", Scopes: []string{auth.ScopeRead}})
		if err != nil || ownerTok.Name != "Laptop" {
			t.Fatalf("a named token: %v %q", err, ownerTok.Name)
		}
		if _, _, err := f.svc.CreateToken(ctx, f.person, service.TokenSpec{Name: "a\nb", Scopes: []string{auth.ScopeRead}}); codeOf(err) != problem.Invalid {
			t.Errorf("a name with a newline: %v", err)
		}
		toks, err := f.svc.ListTokens(ctx, member)
		if err != nil || len(toks) != 1 || toks[0].ID != mine.ID {
			t.Fatalf("a member's tokens: %v %+v", err, toks)
		}
		if err := f.svc.RevokeToken(ctx, member, ownerTok.ID); codeOf(err) != problem.NotFound {
			t.Errorf("a member revoking the owner's token: %v", err)
		}
		if all, _ := f.svc.ListTokens(ctx, f.person); len(all) < 2 {
			t.Errorf("the owner sees %d tokens", len(all))
		}
		if err := f.svc.RevokeToken(ctx, member, mine.ID); err != nil {
			t.Fatal(err)
		}
		if err := f.svc.RevokeToken(ctx, member, mine.ID); codeOf(err) != problem.Invalid {
			t.Errorf("revoking twice: %v", err)
		}

		if _, err := f.svc.RemovePerson(ctx, f.person, inv.Person.ID); err != nil {
			t.Fatal(err)
		}
		if people, _ := f.svc.People(ctx, f.person); len(people) != 1 {
			t.Errorf("after removal: %+v", people)
		}

		if err := f.svc.RenameWorkspace(ctx, f.person, " "); codeOf(err) != problem.Invalid {
			t.Errorf("an empty name: %v", err)
		}
		if err := f.svc.RenameWorkspace(ctx, f.person, "Acme"); err != nil {
			t.Fatal(err)
		}
		w, err := f.svc.Workspace(ctx, f.person, "https://foundry.example.com/", true)
		if err != nil || w.Name != "Acme" || w.MCPURL != "https://foundry.example.com/mcp" {
			t.Fatalf("workspace: %v %+v", err, w)
		}
		if _, err := f.svc.People(ctx, service.Agent(f.read)); codeOf(err) != service.PersonOnly {
			t.Errorf("an agent listing people: %v", err)
		}
	})
}
