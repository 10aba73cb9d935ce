package service

import (
	"unicode/utf8"

	"foundry/internal/room"
)

// What an agent is told of its code: the answer to a snippet proposal and
// the status of an app instance carry the build of the code, so an agent
// whose snippet does not compile hears so, where, and what it says — the
// same result the person reviewing it sees.

// Build states of a snippet's code, besides room.BuildNone (no code known
// to build: a repository proposal) and room.BuildPinned (a repository app
// runs its pinned version).
const (
	BuildCompiled = "compiled"
	BuildFailed   = "failed"
)

// Bounds of what one answer tells of a failed build: the first
// MaxBuildErrors errors (ErrorCount says how many there are), each source
// line cut to MaxBuildLineBytes.
const (
	MaxBuildErrors    = 20
	MaxBuildLineBytes = 240
)

// BuildError is one compile error: a file of the snippet ("" when it is
// about no file), its 1-based line and 0-based column (as the compiler
// counts them), what it says and the source line.
type BuildError struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Text     string `json:"text"`
	LineText string `json:"line_text,omitempty"`
}

// BuildReport is the build of one proposal's or app's code: State
// (BuildCompiled, BuildFailed, room.BuildNone, room.BuildPinned), when it
// was pinned (repository apps), and the errors of a failed one.
type BuildReport struct {
	State      string       `json:"state"`
	At         string       `json:"at,omitempty"`
	Errors     []BuildError `json:"errors,omitempty"`
	ErrorCount int          `json:"error_count,omitempty"`
}

// Failed says whether the build failed.
func (b *BuildReport) Failed() bool { return b != nil && b.State == BuildFailed }

// buildOf is what c (a snippet's compile result) tells: compiled, or
// failed with its errors; withLines keeps each error's source line.
func buildOf(c *room.Compile, withLines bool) BuildReport {
	if c == nil {
		return BuildReport{State: room.BuildNone}
	}
	if c.OK && len(c.Errors) == 0 {
		return BuildReport{State: BuildCompiled}
	}
	b := BuildReport{State: BuildFailed, ErrorCount: len(c.Errors), Errors: []BuildError{}}
	for _, m := range c.Errors[:min(len(c.Errors), MaxBuildErrors)] {
		e := BuildError{File: m.File, Line: m.Line, Column: m.Column, Text: m.Text}
		if withLines {
			e.LineText = cutBytes(m.LineText, MaxBuildLineBytes)
		}
		b.Errors = append(b.Errors, e)
	}
	return b
}

// BuildOfCompile is the build state of c (a snippet's compile result):
// BuildCompiled or BuildFailed.
func BuildOfCompile(c *room.Compile) string { return buildOf(c, false).State }

// cutBytes is s cut to at most n bytes, on a character boundary, with "…"
// when it was cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// instanceBuilds are the builds of an instance's code read_room_app_status
// tells: of the proposal that reserved it (a snippet's compile result; nil
// for a repository proposal or an unknown one) and of the app once it was
// approved (nil before): a snippet app's is its proposal's compile result
// (the code approved is the code proposed, compiled by the same compiler
// where its tab opens), a repository app's the launcher's own (pinned).
// Source lines are left out: the status of an instance is readable by every
// connection of the workspace, and it holds no files.
func instanceBuilds(d *room.Doc, pr *room.Proposal, instanceID string) (proposal, app *BuildReport) {
	if pr != nil && pr.Kind == room.KindSnippet {
		b := buildOf(CompileOf(pr), false)
		proposal = &b
	}
	for _, a := range d.Apps {
		if a.InstanceID != instanceID {
			continue
		}
		b := BuildReport{State: a.Build.State, At: a.Build.At}
		if a.Kind == room.KindSnippet {
			if proposal == nil {
				return nil, nil // its proposal is not known: nothing to tell
			}
			b = *proposal
		}
		app = &b
	}
	return proposal, app
}
