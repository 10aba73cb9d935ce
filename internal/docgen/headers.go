package docgen

import (
	"fmt"
	"strings"

	"foundry/internal/account"
	"foundry/internal/sandbox"
	"foundry/internal/web"
)

// HeadersTable renders the security policies each kind of page is served
// with, from the constants the handlers send.
func HeadersTable() (string, error) {
	rows := []struct{ page, header, value, constant string }{
		{"the web app (`/`, `/notes/…`, …)", "Content-Security-Policy", web.CSP, "web.CSP"},
		{"the web app's live worker (`" + web.AssetPrefix + web.LiveWorkerPrefix + "HASH.js`)", "Content-Security-Policy", web.WorkerCSP, "web.WorkerCSP"},
		{"sign-in, setup and consent pages", "Content-Security-Policy", account.ContentSecurityPolicy, "account.ContentSecurityPolicy"},
		{"a Room app's frame (`" + sandbox.Path + "`)", "Content-Security-Policy", sandbox.CSP, "sandbox.CSP"},
		{"a Room app's frame (`" + sandbox.Path + "`)", "Permissions-Policy", sandbox.PermissionsPolicy, "sandbox.PermissionsPolicy"},
	}
	var b strings.Builder
	b.WriteString("| Page | Header | Value | In the code |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | `%s` |\n", r.page, r.header, cell(r.value), r.constant)
	}
	return b.String(), nil
}
