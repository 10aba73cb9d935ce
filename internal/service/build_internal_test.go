package service

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"foundry/internal/room"
)

// A failed build tells at most MaxBuildErrors errors and how many there
// are, each source line cut on a character boundary; a compiled one tells
// no errors; no result is "none".
func TestBuildOfIsBounded(t *testing.T) {
	var msgs []room.CompileMessage
	for i := range MaxBuildErrors + 5 {
		msgs = append(msgs, room.CompileMessage{File: room.EntryPoint, Line: i + 1, Column: 2, Text: fmt.Sprint("error ", i), LineText: strings.Repeat("é", MaxBuildLineBytes)})
	}
	b := buildOf(&room.Compile{OK: false, Errors: msgs}, true)
	if b.State != BuildFailed || b.ErrorCount != MaxBuildErrors+5 || len(b.Errors) != MaxBuildErrors || b.Errors[3].Line != 4 || b.Errors[3].Text != "error 3" {
		t.Fatalf("failed build: %+v", b)
	}
	if l := b.Errors[0].LineText; !utf8.ValidString(l) || len(l) > MaxBuildLineBytes+len("…") || !strings.HasSuffix(l, "…") {
		t.Errorf("a long source line is told as %q (%d bytes)", l, len(l))
	}
	if b := buildOf(&room.Compile{OK: false, Errors: msgs[:1]}, false); b.Errors[0].LineText != "" || b.ErrorCount != 1 {
		t.Errorf("without lines: %+v", b)
	}
	if b := buildOf(&room.Compile{OK: true, Errors: []room.CompileMessage{}}, true); b.State != BuildCompiled || b.Errors != nil || b.ErrorCount != 0 {
		t.Errorf("compiled: %+v", b)
	}
	if b := buildOf(nil, true); b.State != room.BuildNone {
		t.Errorf("no result: %+v", b)
	}
}
