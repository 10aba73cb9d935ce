package main

import (
	"regexp"
	"strings"
	"testing"
)

// oneDash is a flag written as Go's flag package writes it.
var oneDash = regexp.MustCompile(`(^|[\s"(])-[A-Za-z]`)

// TestExitCodes: every command exits as the README says — 1 when Foundry
// refused what was asked, 2 when the command was given wrongly (an unknown
// flag, a value of the wrong shape, a required flag left out) — and says
// so with the flag as it is typed, with two dashes.
func TestExitCodes(t *testing.T) {
	data, noteID, _ := grantWorkspace(t)
	cases := []struct {
		args []string // --data is added unless the case ends with a flag that wants a value
		code int
		want []string
		not  []string
	}{
		{[]string{"serve", "--port", "80"}, 2, []string{"serve: there is no flag --port", "serve --help"}, nil},
		{[]string{"notes", "list", "-nope"}, 2, []string{"there is no flag --nope"}, nil},
		{[]string{"serve", "--addr"}, 2, []string{"--addr needs a value"}, nil},
		{[]string{"serve", "--demo=maybe"}, 2, []string{`--demo: "maybe" is not true or false`}, nil},
		{[]string{"notes", "history", noteID, "--limit", "abc"}, 2, []string{`--limit: "abc" is not a number`}, nil},
		{[]string{"notes", "history", noteID, "--limit", "0"}, 2, []string{"--limit"}, nil},
		{[]string{"notes", "history", noteID, "--limit", "51"}, 2, []string{"--limit", "between 1 and 50"}, nil},
		{[]string{"token", "create", "--scopes", "osfoundry:admin"}, 2, []string{`--scopes: "osfoundry:admin" is not a scope`, "osfoundry:read", "osfoundry:write"}, nil},
		{[]string{"token", "create", "--scopes", ","}, 2, []string{"--scopes", "osfoundry:read", "osfoundry:write"}, nil},
		{[]string{"token", "create", "--notes", "all," + noteID}, 2, []string{"--notes"}, nil},
		{[]string{"token", "create", "--notes", "note_nope"}, 1, []string{"--notes", "no Note note_nope"}, nil},
		{[]string{"token", "list", "extra"}, 2, []string{"takes no arguments"}, nil},
		{[]string{"notes", "restore", noteID}, 2, []string{"--version is required", "notes history " + noteID}, []string{"got 0"}},
		{[]string{"notes", "restore", noteID, "--version", "0"}, 2, []string{"--version: 0 is not a version"}, []string{"got 0"}},
		{[]string{"notes", "restore", noteID, "--version", "x"}, 2, []string{`--version: "x" is not a number`}, nil},
		{[]string{"notes", "restore", noteID, "--version", "7"}, 1, []string{"--version", "got 7"}, nil},
		{[]string{"notes", "restore", "note_nope", "--version", "1"}, 1, []string{"no Note note_nope"}, nil},
		{[]string{"notes", "restore"}, 2, []string{"needs NOTE_ID"}, nil},
		{[]string{"notes", "create"}, 2, []string{"--title"}, nil},
		{[]string{"rooms", "create"}, 2, []string{"--name"}, nil},
		{[]string{"user", "add", "not-an-email"}, 2, []string{`EMAIL: "not-an-email" is not an email address`}, nil},
		{[]string{"user", "remove", "not-an-email"}, 2, []string{"EMAIL:"}, nil},
		{[]string{"user", "add", "ada@example.com", "--role", "king"}, 2, []string{`--role: "king" is not a role`}, nil},
		{[]string{"user", "add", "owner@localhost"}, 1, []string{"already a user"}, nil},
		{[]string{"user", "remove", "owner@localhost"}, 1, []string{"last owner"}, nil},
		{[]string{"user", "passwd", "nobody@example.com"}, 1, []string{"no user nobody@example.com"}, nil},
		{[]string{"migrate", "--database", "ftp://db.example.com"}, 2, []string{`--database: "ftp://db.example.com" is not a postgres:// URL`}, nil},
		{[]string{"token", "revoke", "tok_nope"}, 1, []string{"no token tok_nope"}, nil},
		{[]string{"proposals", "list", "--status", "pendig"}, 2, []string{"--status"}, nil},
		{[]string{"bogus"}, 2, []string{`unknown command "bogus"`}, nil},
		{[]string{"token"}, 2, []string{"SUBCOMMAND"}, nil},
		{[]string{"token", "bogus"}, 2, []string{`unknown subcommand "bogus"`}, nil},
	}
	for _, c := range cases {
		args := append([]string{}, c.args...)
		if last := args[len(args)-1]; last != "--addr" {
			args = append(args, "--data", data)
		}
		code, stdout, stderr := runInProcess(t, args...)
		if code != c.code {
			t.Errorf("foundry %s: exit %d, want %d\n%s", strings.Join(c.args, " "), code, c.code, stderr)
		}
		if code != 0 && stdout != "" {
			t.Errorf("foundry %s: exit %d printed %q on stdout", strings.Join(c.args, " "), code, stdout)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("foundry %s says %q; want %q in it", strings.Join(c.args, " "), stderr, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(stderr, w) {
				t.Errorf("foundry %s says %q; it must not say %q", strings.Join(c.args, " "), stderr, w)
			}
		}
		if m := oneDash.FindString(stderr); m != "" {
			t.Errorf("foundry %s says %q: a flag with one dash (%q)", strings.Join(c.args, " "), stderr, m)
		}
	}
}
