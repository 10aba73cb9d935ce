package service

import (
	"encoding/base64"
	"strconv"
	"strings"

	"foundry/internal/problem"
	"foundry/internal/store"
)

// A cursor is base64url("<kind>:<value>") of a value this server wrote. A
// client may send anything, so decoding is strict: canonical unpadded
// base64url only, a kind this list uses, and a value of that kind's shape
// within its bounds. Anything else is refused as a cursor this list never
// returned; nothing a client sends is ever used as an index unchecked.

// MaxCursorOffset bounds a position cursor: no list an agent pages through
// (sources, files, launcher apps) gets anywhere near this long, so an offset
// beyond it was never returned, and offset+limit can't overflow.
const MaxCursorOffset = 1_000_000

// maxCursorLen bounds an encoded cursor (the tool schemas say 200).
const maxCursorLen = 256

// cursorShape is what the value of a cursor kind looks like.
type cursorShape int

const (
	shapeID     cursorShape = iota // a resource ID, as the list's AfterID
	shapeSeq                       // an event sequence number, 0 … MaxInt64
	shapeOffset                    // a position in a list, 0 … MaxCursorOffset
	shapeSearch                    // a place in search_notes' order (store.SearchCursor)
)

// cursorKinds lists every cursor kind the server writes and its shape.
var cursorKinds = map[string]cursorShape{
	"n":       shapeID,     // list_notes
	"r":       shapeID,     // list_rooms
	"repo":    shapeID,     // list_repositories
	"e":       shapeSeq,    // poll_resource_events
	"h":       shapeSeq,    // a Note's history, by version
	"a":       shapeOffset, // list_room_apps
	"sources": shapeOffset, // list_note_attachments
	"files":   shapeOffset, // list_note_attachments
	"s":       shapeSearch, // search_notes
}

func encodeCursor(kind, v string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + v))
}

// decodeCursor returns the value of a cursor of this kind ("" for no
// cursor), or a problem naming the field cursor.
func decodeCursor(c, kind string) (string, error) {
	if c == "" {
		return "", nil
	}
	shape, known := cursorKinds[kind]
	if !known || len(c) > maxCursorLen {
		return "", badCursor()
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	// The decoder skips '\r' and '\n'; re-encoding refuses those and any
	// other second spelling of the same bytes.
	if err != nil || base64.RawURLEncoding.EncodeToString(b) != c {
		return "", badCursor()
	}
	v, ok := strings.CutPrefix(string(b), kind+":")
	if !ok || !validCursorValue(shape, v) {
		return "", badCursor()
	}
	return v, nil
}

func validCursorValue(shape cursorShape, v string) bool {
	switch shape {
	case shapeID:
		if v == "" || len(v) > 128 {
			return false
		}
		for i := 0; i < len(v); i++ {
			c := v[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
				return false
			}
		}
		return true
	case shapeSeq:
		return canonicalUint(v, 1<<63-1)
	case shapeOffset:
		return canonicalUint(v, MaxCursorOffset)
	case shapeSearch:
		c, err := store.ParseSearchCursor(v)
		return err == nil && c.String() == v
	}
	return false
}

// canonicalUint reports whether v is the one decimal spelling of a number in
// 0…max: digits only, no sign, no leading zeros.
func canonicalUint(v string, max uint64) bool {
	if v == "" || len(v) > 19 || (len(v) > 1 && v[0] == '0') || strings.Trim(v, "0123456789") != "" {
		return false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return err == nil && n <= max
}

// offsetCursor decodes a cursor that holds a position in a list: 0 for no
// cursor, else a number in 0…MaxCursorOffset, so off+limit is always safe.
func offsetCursor(cursor, kind string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	if cursorKinds[kind] != shapeOffset {
		return 0, badCursor()
	}
	c, err := decodeCursor(cursor, kind)
	if err != nil {
		return 0, err
	}
	off, err := strconv.Atoi(c)
	if err != nil || off < 0 || off > MaxCursorOffset {
		return 0, badCursor()
	}
	return off, nil
}

func badCursor() error {
	return problem.New(problem.Invalid, "cursor", "is not a cursor this list returned; omit it to start from the first page")
}
