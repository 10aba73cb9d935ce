package account_test

import (
	"context"
	"testing"

	"foundry/internal/account"
)

// TestOwnerToSetUp: the first owner needs a link while no owner has a
// password, whoever else has one; once any owner has one, none does.
func TestOwnerToSetUp(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{}) // Ada, a member, has a password
		ctx := context.Background()
		ws := e.owner.Workspace
		u, ok, err := account.OwnerToSetUp(ctx, e.st, ws)
		if err != nil || !ok || u.ID != e.owner.ID {
			t.Fatalf("OwnerToSetUp = %s, %v, %v; want the first owner", u.Email, ok, err)
		}
		second, err := account.AddUser(ctx, e.st, ws, account.NewUser{Email: "second@example.com", Role: account.RoleOwner})
		if err != nil {
			t.Fatal(err)
		}
		if u, ok, _ := account.OwnerToSetUp(ctx, e.st, ws); !ok || u.ID != e.owner.ID {
			t.Errorf("with two owners without a password: %s, %v; want the first", u.Email, ok)
		}
		if err := account.SetPassword(ctx, e.st, second, "password", "second's password"); err != nil {
			t.Fatal(err)
		}
		if u, ok, _ := account.OwnerToSetUp(ctx, e.st, ws); ok {
			t.Errorf("an owner has a password, yet %s is to be set up", u.Email)
		}
		// Removing the owner with a password leaves none who can sign in.
		if err := account.RemoveUser(ctx, e.st, second); err != nil {
			t.Fatal(err)
		}
		if u, ok, _ := account.OwnerToSetUp(ctx, e.st, ws); !ok || u.ID != e.owner.ID {
			t.Errorf("after removing the only owner with a password: %s, %v", u.Email, ok)
		}
	})
}
