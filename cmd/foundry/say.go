package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"foundry/internal/problem"
)

// The service says what is wrong (a problem.Problem: code, field, message);
// the CLI says it in its own words, with the values the person typed and
// the commands that help, never the MCP door's tool names or arguments.

// sentErr carries the values a command sent, by the field names the service
// uses for them, so a refusal can name what the person typed.
type sentErr struct {
	err  error
	sent map[string]string
}

func (e *sentErr) Error() string { return e.err.Error() }
func (e *sentErr) Unwrap() error { return e.err }

// sent annotates err with field/value pairs; nil stays nil.
func sent(err error, fieldValues ...string) error {
	if err == nil {
		return nil
	}
	m := map[string]string{}
	for i := 0; i+1 < len(fieldValues); i += 2 {
		m[fieldValues[i]] = fieldValues[i+1]
	}
	return &sentErr{err: err, sent: m}
}

// thing is what a field names, and the command that lists them.
type thing struct{ what, list string }

var things = map[string]thing{
	"note_id":       {"Note", "notes list"},
	"notes":         {"Note", "notes list"},
	"room_id":       {"Room", "rooms list"},
	"rooms":         {"Room", "rooms list"},
	"proposal_id":   {"proposal", "proposals list"},
	"token_id":      {"token", "token list"},
	"repository_id": {"repository", ""},
	"version_id":    {"repository version", ""},
	"instance_id":   {"app", "proposals list --status all"},
}

// flagOf is the flag (or argument) a field of the service comes from.
var flagOf = map[string]string{
	"title": "--title", "name": "--name", "scopes": "--scopes", "notes": "--notes", "rooms": "--rooms",
	"version": "--version", "status": "--status", "room": "--room", "files": "DIR",
	"note_id": "NOTE_ID", "proposal_id": "PROPOSAL_ID", "token_id": "TOKEN_ID", "room_id": "ROOM_ID",
	"cursor": "--cursor", "limit": "--limit", "database": "--database", "role": "--role",
}

// doorWords are what only the MCP door says: tool names, its arguments,
// "this connection".
var doorWords = regexp.MustCompile(`\b(list|read|edit|create|add|propose|poll)_[a-z_]+\b|\bthis connection\b|\bexpected_version\b|\bidempotency_key\b|\bagent\b`)

// say is err in the CLI's words.
func say(err error) string {
	sentValues := map[string]string{}
	var se *sentErr
	if errors.As(err, &se) {
		sentValues = se.sent
	}
	var p *problem.Problem
	if !errors.As(err, &p) {
		return selfCommands(err.Error())
	}
	base, _, _ := strings.Cut(p.Field, "[")
	t, known := things[base]
	switch p.Code {
	case problem.NotFound:
		if !known {
			break
		}
		id := sentValues[p.Field]
		if id == "" {
			id = sentValues[base]
		}
		msg := fmt.Sprintf("no %s %s in this workspace", t.what, id)
		if id == "" {
			msg = fmt.Sprintf("no such %s in this workspace", t.what)
		}
		if t.list != "" {
			msg += fmt.Sprintf("; `%s %s` shows them", self, t.list)
		}
		if base == "notes" || base == "rooms" { // a token's grant
			return fmt.Sprintf("--%s: %s, or give --%s all", base, msg, base)
		}
		return msg
	case problem.Conflict:
		what := "it"
		if known {
			what = "the " + t.what
		}
		if base == "expected_version" || !known {
			what = "the Note or Room"
		}
		cur := ""
		if v, ok := p.Details["current_version"]; ok {
			cur = fmt.Sprintf(" (it is at version %v now)", v)
		}
		return fmt.Sprintf("%s changed while this command ran%s; nothing was written: run the command again", what, cur)
	}
	msg := doorNeutral(p.Message)
	if msg == "" {
		msg = strings.ReplaceAll(p.Code, "_", " ")
	}
	if f, ok := flagOf[base]; ok {
		if rest := p.Field[len(base):]; rest != "" {
			return fmt.Sprintf("%s (%s): %s", f, p.Field, msg)
		}
		return f + ": " + msg
	}
	if p.Field != "" {
		return p.Field + ": " + msg
	}
	return msg
}

// doorNeutral drops the parts of a service message that speak the MCP
// door's language (a service that already speaks neutrally loses nothing).
func doorNeutral(msg string) string {
	msg = selfCommands(msg)
	if !doorWords.MatchString(msg) {
		return msg
	}
	var keep []string
	for _, part := range regexp.MustCompile(`[;.]\s+`).Split(msg, -1) {
		if part = strings.TrimSpace(strings.TrimRight(part, ".")); part != "" && !doorWords.MatchString(part) {
			keep = append(keep, part)
		}
	}
	return strings.Join(keep, "; ")
}

// selfCommands makes the commands quoted in a message run as typed.
func selfCommands(msg string) string {
	if self == "foundry" {
		return msg
	}
	return strings.ReplaceAll(msg, "`foundry ", "`"+self+" ")
}
