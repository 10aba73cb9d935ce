package service_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// hostileOffsetCursors are cursors no list ever returned for a position
// list of kind: each must be refused as invalid_argument on "cursor", never
// used as an index (the first ones crashed the process).
func hostileOffsetCursors(kind string) map[string]string {
	other := "files"
	if kind == "files" {
		other = "sources"
	}
	return map[string]string{
		"max int64":              b64(kind + ":9223372036854775807"),
		"max int64 minus 7":      b64(kind + ":9223372036854775800"),
		"near max int":           b64(kind + ":9223372036854775797"),
		"past int64":             b64(kind + ":9223372036854775808"),
		"huge":                   b64(kind + ":" + strings.Repeat("9", 40)),
		"beyond any list":        b64(kind + fmt.Sprintf(":%d", service.MaxCursorOffset+1)),
		"negative":               b64(kind + ":-1"),
		"min int64":              b64(kind + ":-9223372036854775808"),
		"plus sign":              b64(kind + ":+5"),
		"leading zeros":          b64(kind + ":007"),
		"spaces":                 b64(kind + ": 5"),
		"hex":                    b64(kind + ":0x10"),
		"empty value":            b64(kind + ":"),
		"no kind":                b64("5"),
		"wrong kind":             b64(other + ":5"),
		"kind of an ID list":     b64("n:5"),
		"padded base64":          padded(kind + ":"),
		"std base64":             base64.StdEncoding.EncodeToString([]byte(kind + ":5?>")),
		"newline inside":         b64(kind + ":20")[:4] + "\n" + b64(kind + ":20")[4:],
		"non-canonical trailing": nonCanonical(b64(kind + ":5")),
		"not base64":             "!!!",
		"NUL in value":           b64(kind + ":5\x00"),
		"too long":               b64(kind + ":" + strings.Repeat("1", 300)),
	}
}

// padded is base64url of prefix and a number, with the '=' padding the
// server never writes.
func padded(prefix string) string {
	v := "5"
	if len(prefix+v)%3 == 0 {
		v = "50"
	}
	return base64.URLEncoding.EncodeToString([]byte(prefix + v))
}

// nonCanonical changes the unused low bits of the last base64 character, a
// second spelling of the same bytes that a lenient decoder accepts.
func nonCanonical(c string) string {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(c)%4 == 0 {
		return c + "=" // no spare bits; padding is still not ours
	}
	last := strings.IndexByte(alpha, c[len(c)-1])
	return c[:len(c)-1] + string(alpha[last|1])
}

func TestListNoteAttachmentsRefusesHostileCursors(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		for _, kind := range []string{"sources", "files"} {
			for name, c := range hostileOffsetCursors(kind) {
				t.Run(kind+"/"+name, func(t *testing.T) {
					for _, limit := range []int{0, 1, 50} {
						_, err := f.svc.ListNoteAttachments(ctx, service.Agent(f.read), service.AttachmentsArgs{NoteID: f.noteID, Kind: kind, Page: service.Page{Cursor: c, Limit: limit}})
						wantProblem(t, err, problem.Invalid, "cursor")
					}
				})
			}
		}
	})
}

func TestListRoomAppsRefusesHostileCursors(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		for name, c := range hostileOffsetCursors("a") {
			t.Run(name, func(t *testing.T) {
				for _, limit := range []int{0, 1, 50} {
					_, err := f.svc.ListRoomApps(ctx, service.Agent(f.read), service.RoomAppsArgs{RoomID: f.roomID, Page: service.Page{Cursor: c, Limit: limit}})
					wantProblem(t, err, problem.Invalid, "cursor")
				}
			})
		}
	})
}

// A cursor the server returned pages on; one past the end of a list that
// shrank is an empty last page, not an error.
func TestOffsetCursorsThatWereReturnedStillPage(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		for i := range 3 {
			if _, err := f.svc.AddNoteSource(ctx, service.Agent(f.write), service.AddSourceArgs{NoteID: f.noteID, ExpectedVersion: f.version(t),
				IdempotencyKey: fmt.Sprintf("add-source-%d", i), Title: "Page", URL: fmt.Sprintf("https://example.org/p%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := f.svc.ListNoteAttachments(ctx, service.Agent(f.read), service.AttachmentsArgs{NoteID: f.noteID, Kind: "sources", Page: service.Page{Cursor: "", Limit: 2}})
		if err != nil {
			t.Fatal(err)
		}
		next := res.NextCursor
		if next == "" {
			t.Fatalf("no next_cursor after 2 of 3 sources: %v", res)
		}
		res, err = f.svc.ListNoteAttachments(ctx, service.Agent(f.read), service.AttachmentsArgs{NoteID: f.noteID, Kind: "sources", Page: service.Page{Cursor: next, Limit: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if res.NextCursor != "" || fmt.Sprint(res.Total) != "3" {
			t.Fatalf("second page = %v; want the last source and no next_cursor", res)
		}
		res, err = f.svc.ListNoteAttachments(ctx, service.Agent(f.read), service.AttachmentsArgs{NoteID: f.noteID, Kind: "sources", Page: service.Page{Cursor: b64("sources:1000"), Limit: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(res.Items) != "[]" {
			t.Fatalf("a position past the end gave %v; want an empty page", res.Items)
		}
		if _, err := f.svc.ListRoomApps(ctx, service.Agent(f.read), service.RoomAppsArgs{RoomID: f.roomID, Page: service.Page{Cursor: b64("a:0"), Limit: 0}}); err != nil {
			t.Fatalf("list_room_apps from position 0: %v", err)
		}
	})
}

// ID and event cursors are untrusted too: the same strict decoding, and a
// value of the kind's shape (no NUL or other bytes a database refuses with
// its own message, no second spelling of a number).
func TestIDAndEventCursorsRefuseHostileValues(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		idCursors := func(kind, other string) map[string]string {
			return map[string]string{
				"NUL in ID":         b64(kind + ":x_\x00x"),
				"control in ID":     b64(kind + ":x_\x1bx"),
				"quote in ID":       b64(kind + ":x_'x"),
				"empty ID":          b64(kind + ":"),
				"wrong kind":        b64(other + ":x_abc"),
				"padded":            base64.URLEncoding.EncodeToString([]byte(kind + ":x_abcd")),
				"non-canonical":     nonCanonical(b64(kind + ":x_abcd")),
				"newline inside":    b64(kind + ":x_abcdef")[:3] + "\r\n" + b64(kind + ":x_abcdef")[3:],
				"overlong ID":       b64(kind + ":" + strings.Repeat("a", 200)),
				"non-ASCII in ID":   b64(kind + ":x_é"),
				"not base64 at all": "%%%",
			}
		}
		for name, c := range idCursors("n", "r") {
			t.Run("list_notes/"+name, func(t *testing.T) {
				_, err := f.svc.ListNotes(ctx, service.Agent(f.read), service.ListNotesArgs{Page: service.Page{Cursor: c}})
				wantProblem(t, err, problem.Invalid, "cursor")
			})
		}
		for name, c := range idCursors("r", "n") {
			t.Run("list_rooms/"+name, func(t *testing.T) {
				_, err := f.svc.ListRooms(ctx, service.Agent(f.read), service.Page{Cursor: c})
				wantProblem(t, err, problem.Invalid, "cursor")
			})
		}
		eventCursors := map[string]string{
			"plus sign":     b64("e:+5"),
			"leading zeros": b64("e:05"),
			"negative":      b64("e:-1"),
			"past int64":    b64("e:9223372036854775808"),
			"wrong kind":    b64("a:5"),
			"padded":        padded("e:"),
			"NUL":           b64("e:5\x00"),
		}
		for name, c := range eventCursors {
			t.Run("poll/"+name, func(t *testing.T) {
				_, err := f.svc.PollEvents(ctx, service.Agent(f.read), service.PollArgs{ResourceType: "note", ResourceID: f.noteID, Page: service.Page{Cursor: c}})
				wantProblem(t, err, problem.Invalid, "cursor")
			})
		}
		// What the server returns is still accepted.
		res, err := f.svc.PollEvents(ctx, service.Agent(f.read), service.PollArgs{ResourceType: "note", ResourceID: f.noteID, Page: service.Page{Cursor: ""}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.PollEvents(ctx, service.Agent(f.read), service.PollArgs{ResourceType: "note", ResourceID: f.noteID, Page: service.Page{Cursor: res.NextCursor}}); err != nil {
			t.Fatalf("a returned event cursor was refused: %v", err)
		}
		if _, err := f.svc.ListNotes(ctx, service.Agent(f.read), service.ListNotesArgs{Page: service.Page{Cursor: b64("n:" + f.noteID)}}); err != nil {
			t.Fatalf("an ID cursor of a real Note was refused: %v", err)
		}
	})
}
