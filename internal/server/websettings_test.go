package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"foundry/internal/browsertest"
	"foundry/internal/server"
	"foundry/internal/service"
)

// settingsXChoose picks value in the <select> sel as a person's choice
// does: the value, then the change event React listens for.
func settingsXChoose(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const s = document.querySelector(%q);
		s.value = %q;
		s.dispatchEvent(new Event("change", {bubbles: true}));
	})()`, sel, value))
}

// settingsXBearer is the status of GET /api/notes with the token secret.
func settingsXBearer(t *testing.T, base, secret string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/api/notes", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestBrowserSettings: the owner invites a member (the one-time link shown
// once, with Copy) who sets a password by it and sees only what applies to
// them; the owner changes the member's role, cannot demote or remove the
// last owner, creates a token (shown once, listed, working against /api/)
// and revokes it (refused after), renames the workspace, and removes the
// member, whose session ends. Each act is checked in the service too.
func TestBrowserSettings(t *testing.T) {
	t.Parallel()
	e, ctx := startBrowserEnv(t, server.Config{})
	bg := context.Background()
	owner := service.Person(e.Owner.Workspace.ID, e.Owner.User.ID, service.RoleOwner)
	people := func() map[string]service.Member {
		t.Helper()
		list, err := e.Server.Service.People(bg, owner)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]service.Member{}
		for _, m := range list {
			out[m.Email] = m
		}
		return out
	}

	do(t, ctx, "open Settings", chromedp.Navigate(e.URL+"/settings"), chromedp.WaitVisible(chromedp.ID("password")))
	signIn(t, ctx, e.Owner.User.Email, ownerPassword)
	do(t, ctx, "the People page", chromedp.WaitVisible(chromedp.ID("people-title")), chromedp.WaitVisible(chromedp.CSS(`.invite-form`)))
	if cur := run(t, ctx, "nav", chromedp.Text(chromedp.CSS(`.sidenav [aria-current=page]`))); cur != "Settings" {
		t.Errorf("the nav marks %q as the current page, want Settings", cur)
	}
	waitEmpty := run(t, ctx, "empty state", chromedp.Text(chromedp.CSS(`.settings-empty`)))
	if !strings.Contains(waitEmpty, "Only you are in this workspace") {
		t.Errorf("the people page of a lone owner says %q", waitEmpty)
	}
	if rooms := run(t, ctx, "rooms link", chromedp.Evaluate[string](`document.querySelector('.settings-nav a[href="/rooms"]')?.innerText ?? ""`)); !strings.Contains(rooms, "Rooms: create, rename, delete") {
		t.Errorf("no link to the Rooms page: %q", rooms)
	}

	// Invite: a bad address is refused by name; a good one shows the link once.
	do(t, ctx, "invite a bad address",
		chromedp.SendKeys(chromedp.CSS(`.invite-form input[name=email]`), "ada@"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(".invite-form").noValidate = true`),
		browsertest.Click(chromedp.CSS(`.invite-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.invite-form .field-error`)),
	)
	if msg := run(t, ctx, "bad email", chromedp.Text(chromedp.CSS(`.invite-form .field-error`))); !strings.Contains(msg, "email") {
		t.Errorf("a bad email: the form says %q", msg)
	}
	do(t, ctx, "invite Ada",
		selectAll(`.invite-form input[name=email]`),
		chromedp.KeyEvent("ada@example.com"),
		browsertest.Click(chromedp.CSS(`.invite-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("invite-link")),
		waitText(`li[data-email="ada@example.com"]`, "Invited"),
	)
	link := run(t, ctx, "the link", chromedp.Evaluate[string](`document.getElementById("invite-link").value`))
	if !strings.HasPrefix(link, e.URL+"/setup?token=") {
		t.Fatalf("the invitation's link is %q, want one on %s/setup", link, e.URL)
	}
	if text := run(t, ctx, "the invitation", chromedp.Text(chromedp.CSS(`.once`))); !strings.Contains(text, "shown only now") || !strings.Contains(text, "works once") {
		t.Errorf("the invitation does not say the link is shown once and works once:\n%s", text)
	}
	do(t, ctx, "copy the link", browsertest.Click(chromedp.CSS(`.once button[aria-describedby="invite-link-said"]`)), browsertest.Poll(`document.getElementById("invite-link-said").innerText.trim() !== ""`))
	said := run(t, ctx, "copied", chromedp.Text(chromedp.ID("invite-link-said")))
	selected := run(t, ctx, "selected", chromedp.Evaluate[string](`window.getSelection().toString() || (document.activeElement === document.getElementById("invite-link") ? document.activeElement.value.slice(document.activeElement.selectionStart, document.activeElement.selectionEnd) : "")`))
	if said != "Copied." && !(strings.HasPrefix(said, "Selected") && selected == link) {
		t.Errorf("Copy says %q with %q selected", said, selected)
	}
	ada, ok := people()["ada@example.com"]
	if !ok || ada.Role != "member" || ada.Status != service.StatusInvited {
		t.Fatalf("the service's people after the invitation: %+v", people())
	}
	noOverflow(t, ctx, "settings-people")
	accessible(t, ctx, "settings-people")
	browsertest.Screenshot(t, ctx, "settings-people")

	// Ada follows the link in a browser of her own and sees what applies to her.
	actx := browsertest.New(t)
	do(t, actx, "Ada's link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("confirm")),
		chromedp.SendKeys(chromedp.ID("password"), "ada's long password"),
		chromedp.SendKeys(chromedp.ID("confirm"), "ada's long password"),
		browsertest.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.sidenav`)),
		chromedp.Navigate(e.URL+"/settings/people"),
		chromedp.WaitVisible(chromedp.CSS(`li[data-email="ada@example.com"]`)),
	)
	if n := run(t, actx, "member controls", chromedp.Evaluate[int](`document.querySelectorAll(".invite-form, .role-select, .person-actions button").length`)); n != 0 {
		t.Errorf("a member sees %d controls of an owner's", n)
	}
	if text := run(t, actx, "member people", chromedp.Text(chromedp.CSS(`.settings-part`))); !strings.Contains(text, "An owner of the workspace invites people") || !strings.Contains(text, e.Owner.User.Email) {
		t.Errorf("a member's People page says:\n%s", text)
	}
	accessible(t, actx, "settings-people-member")
	do(t, actx, "Ada's tokens", chromedp.Navigate(e.URL+"/settings/tokens"), chromedp.WaitVisible(chromedp.CSS(`.token-form`)), waitText(".settings-empty", "No token is active"))
	if ph := run(t, actx, "placeholder", chromedp.Evaluate[string](`document.querySelector(".token-form input[name=name]").placeholder`)); ph != "Personal token 1" {
		t.Errorf("a member's first token's name placeholder is %q", ph)
	}
	do(t, actx, "Ada's workspace", chromedp.Navigate(e.URL+"/settings/workspace"), chromedp.WaitVisible(chromedp.ID("mcp-url")))
	if n := run(t, actx, "rename form", chromedp.Evaluate[int](`document.querySelectorAll("input[name=workspace-name]").length`)); n != 0 {
		t.Error("a member is offered to rename the workspace")
	}

	// Roles: Ada becomes an owner and a member again; the last owner stays one.
	adaRole := `#role-` + ada.ID
	do(t, ctx, "make Ada an owner", settingsXChoose(adaRole, "owner"), waitText(".notice", "ada@example.com is now an owner"))
	if people()["ada@example.com"].Role != "owner" {
		t.Fatal("the role change did not reach the service")
	}
	do(t, ctx, "and a member again", settingsXChoose(adaRole, "member"), waitText(".notice", "ada@example.com is now a member"))
	if people()["ada@example.com"].Role != "member" {
		t.Fatal("the second role change did not reach the service")
	}
	ownerRow := fmt.Sprintf(`li[data-email=%q]`, e.Owner.User.Email)
	do(t, ctx, "the last owner's row", browsertest.Poll(fmt.Sprintf(`document.querySelector(%q)?.disabled === true`, ownerRow+" .role-select")))
	lastOwner := run(t, ctx, "the last owner's controls", chromedp.Evaluate[[]any](fmt.Sprintf(`(() => { const li = document.querySelector(%q); return [li.querySelector(".danger-text").disabled, li.innerText]; })()`, ownerRow)))
	if lastOwner[0] != true || !strings.Contains(lastOwner[1].(string), "last owner") {
		t.Errorf("the last owner's Remove is not disabled with the reason: %v", lastOwner)
	}

	// Tokens: created, shown once, listed, working, revoked, refused.
	do(t, ctx, "the Tokens page", browsertest.Click(chromedp.CSS(`.settings-nav a[href="/settings/tokens"]`)), chromedp.WaitVisible(chromedp.CSS(`.token-form`)))
	if ph := run(t, ctx, "placeholder", chromedp.Evaluate[string](`document.querySelector(".token-form input[name=name]").placeholder`)); !strings.HasPrefix(ph, "Personal token ") {
		t.Errorf("the token name's placeholder is %q", ph)
	}
	do(t, ctx, "create a token",
		chromedp.SendKeys(chromedp.CSS(`.token-form input[name=name]`), "Deploy script"),
		browsertest.Click(chromedp.CSS(`.token-form input[value="osfoundry:write"]`)),
		browsertest.Click(chromedp.CSS(`.token-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("token-secret")),
		waitText(`#settings-tokens-list`, "Deploy script"),
	)
	secret := run(t, ctx, "the secret", chromedp.Evaluate[string](`document.getElementById("token-secret").value`))
	if text := run(t, ctx, "created", chromedp.Text(chromedp.CSS(`.once`))); !strings.Contains(text, "you will not see it again") || !strings.HasPrefix(secret, "fdy_") {
		t.Errorf("the created token (%q) says:\n%s", secret, text)
	}
	noOverflow(t, ctx, "settings-token-created")
	accessible(t, ctx, "settings-token-created")
	browsertest.Screenshot(t, ctx, "settings-token-created")
	if got := settingsXBearer(t, e.URL, secret); got != http.StatusOK {
		t.Fatalf("the new token against /api/notes: %d", got)
	}
	do(t, ctx, "done, and read again", browsertest.Click(chromedp.CSS(`.once button.small`)), chromedp.WaitNotPresent(chromedp.ID("token-secret")),
		chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#settings-tokens-list`)))
	if n := run(t, ctx, "secret gone", chromedp.Evaluate[int](fmt.Sprintf(`document.body.innerHTML.split(%q).length - 1`, secret))); n != 0 {
		t.Error("the secret is on the page after Done")
	}
	deploy := `[...document.querySelectorAll("#settings-tokens-list li")].find(li => li.innerText.includes("Deploy script"))`
	item := run(t, ctx, "the token's row", chromedp.Evaluate[string](deploy+`?.innerText ?? ""`))
	for _, want := range []string{"Read", "Write", "All Notes and Rooms", "just now"} {
		if !strings.Contains(item, want) {
			t.Errorf("the token's row does not say %q:\n%s", want, item)
		}
	}
	if strings.Contains(item, "never used") {
		t.Errorf("the token's row does not show its use:\n%s", item)
	}
	noOverflow(t, ctx, "settings-tokens")
	accessible(t, ctx, "settings-tokens")
	browsertest.Screenshot(t, ctx, "settings-tokens")
	do(t, ctx, "revoke it",
		browsertest.Click(chromedp.CSS(`button[aria-label="Revoke Deploy script"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)),
		waitText(".notice", "is revoked"),
		chromedp.WaitNotPresent(chromedp.CSS(`button[aria-label="Revoke Deploy script"]`)),
	)
	if got := settingsXBearer(t, e.URL, secret); got != http.StatusUnauthorized {
		t.Errorf("the revoked token against /api/notes: %d, want 401", got)
	}

	// The workspace: renamed, its addresses shown.
	do(t, ctx, "the Workspace page", browsertest.Click(chromedp.CSS(`.settings-nav a[href="/settings/workspace"]`)), chromedp.WaitVisible(chromedp.CSS(`input[name=workspace-name]`)))
	if mcp := run(t, ctx, "mcp", chromedp.Evaluate[string](`document.getElementById("mcp-url").value`)); mcp != e.URL+"/mcp" {
		t.Errorf("the MCP address shown is %q, want %s/mcp", mcp, e.URL)
	}
	do(t, ctx, "rename",
		selectAll(`input[name=workspace-name]`),
		chromedp.KeyEvent("Acme Research"),
		browsertest.Click(chromedp.CSS(`.settings-part form button[type=submit]`)),
		waitText(".notice", "Acme Research"),
		waitText(".topbar .workspace", "Acme Research"),
	)
	if name, err := e.Server.Service.WorkspaceName(bg, owner); err != nil || name != "Acme Research" {
		t.Errorf("the service's workspace name: %q %v", name, err)
	}
	noOverflow(t, ctx, "settings-workspace")
	accessible(t, ctx, "settings-workspace")
	browsertest.Screenshot(t, ctx, "settings-workspace")

	// On a phone nothing is wider than the screen.
	do(t, ctx, "on a phone", browsertest.Phone(), chromedp.Navigate(e.URL+"/settings/people"), chromedp.WaitVisible(chromedp.CSS(ownerRow)))
	noOverflow(t, ctx, "settings-people-phone")
	do(t, ctx, "tokens on a phone", chromedp.Navigate(e.URL+"/settings/tokens"), chromedp.WaitVisible(chromedp.CSS(`.token-form`)))
	noOverflow(t, ctx, "settings-tokens-phone")
	do(t, ctx, "back to a desktop", browsertest.Desktop())

	// Remove Ada: her session ends.
	do(t, ctx, "remove Ada",
		browsertest.Click(chromedp.CSS(`.settings-nav a[href="/settings/people"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Remove ada@example.com"]`)),
		browsertest.Click(chromedp.CSS(`button[aria-label="Remove ada@example.com"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog[open] button.danger`)),
		browsertest.Click(chromedp.CSS(`dialog[open] button.danger`)),
		waitText(".notice", "ada@example.com is removed"),
		chromedp.WaitNotPresent(chromedp.CSS(`li[data-email="ada@example.com"]`)),
	)
	if _, ok := people()["ada@example.com"]; ok {
		t.Fatal("Ada is still in the service's people")
	}
	do(t, actx, "Ada is signed out", chromedp.Navigate(e.URL+"/settings"), chromedp.WaitVisible(chromedp.ID("password")))
}
