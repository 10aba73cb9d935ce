// Package sim reproduces the seeds' experiments against a real Foundry
// server over real MCP HTTP, through a fault injector that drops responses
// after the server committed. Each experiment prints a table shaped like the
// seed's, with the seed's published figure beside ours, writes a CSV (and an
// SVG where a chart says it better), and reports the invariants it checked.
package sim

import (
	"context"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Experiment is one of the seeds' measurements.
type Experiment struct {
	Name  string // command-line name, e.g. "tab-handles"
	Seed  string // which seed measured it, e.g. "000"
	Title string
	Run   func(ctx context.Context, env *Env) (*Report, error)
}

// Env is what an experiment gets: a server to talk to and the run's settings.
type Env struct {
	URL      string // the server's /mcp URL
	Token    string // a read+write token
	NoteID   string // an approved Note to work on (fresh per experiment when the server is in-process)
	RoomID   string // a cloud Room (when Rooms exist)
	Seed     int64
	Quick    bool      // small sizes for go test
	Progress io.Writer // progress lines for long runs
	// People are the acts only a person can do (approve, decline, edit as
	// the web editor does); nil when driving a remote server with --url.
	People People
	// Fresh makes a new approved Note (and Room) for an experiment that
	// needs a clean one; nil when driving a remote server with --url.
	Fresh func(ctx context.Context) (noteID, roomID string, err error)
	// Client connects a go-sdk client whose HTTP goes through rt (nil: plain).
	Client func(ctx context.Context, rt http.RoundTripper) (*mcp.ClientSession, error)
}

// People is the people's side a simulation drives directly.
type People interface {
	ApproveProposal(ctx context.Context, proposalID string) error
	DeclineProposal(ctx context.Context, proposalID string) error
	// EditMarkdown applies edit to the Note's markdown if the Note is still
	// at version expected (the web editor's If-Match); it reports a
	// conflict as an error whose text contains "version_conflict".
	EditMarkdown(ctx context.Context, noteID string, expected int64, edit func(text string) string) (newVersion int64, err error)
	// EditSheetCell writes one cell of the first sheet tab, guarded likewise.
	EditSheetCell(ctx context.Context, noteID, tabID string, expected int64, row, col int, v any) (newVersion int64, err error)
	// Tab strip acts for the tab-handles experiment.
	MoveTab(ctx context.Context, noteID, tabID string, to int) error
	RenameTab(ctx context.Context, noteID, tabID, label string) error
	AddSlidesTab(ctx context.Context, noteID, label string) (tabID string, err error)
}

// Report is what an experiment found.
type Report struct {
	Table      Table
	CSV        [][]string // header row first
	SVG        []byte     // optional chart
	Invariants []Invariant
	Notes      []string // short lines printed under the table
}

// Table is printed as Markdown: ours beside the seed's published figures.
type Table struct {
	Header []string
	Rows   [][]string
}

// Invariant is one promise checked by --check.
type Invariant struct {
	Name string
	Held bool
	Got  string // what was measured, e.g. "0 duplicate cards"
}
