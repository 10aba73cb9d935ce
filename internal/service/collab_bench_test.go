package service_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store"
)

// BenchmarkPushKeystroke: one person's live editor pushes one keystroke
// into a 100 KB markdown text, on a durable SQLite store: what a push
// costs (the guarded write, the part it rewrites, the logged change set),
// and what history and the text log store for it.
//
//	go test ./internal/service/ -run '^$' -bench BenchmarkPushKeystroke -benchtime=2000x -count=1
func BenchmarkPushKeystroke(b *testing.B) {
	ctx := context.Background()
	svc, o := benchService(b)
	text := strings.Repeat("A paragraph of the brief, typed by people and agents. ", 1850)
	n, err := svc.CreateNoteFrom(ctx, service.Operator(o), service.CreateNoteArgs{Title: "Bench", Approved: true}, func(d *note.Doc) error {
		return note.ReplaceText(d, note.TypeMarkdown, text)
	})
	if err != nil {
		b.Fatal(err)
	}
	person := service.Person(o.Workspace.ID, o.User.ID, service.RoleOwner)
	pos := len(text) / 2 // ASCII: UTF-16 positions are byte positions
	rev := int64(0)
	b.ResetTimer()
	for i := range b.N {
		up := []json.RawMessage{json.RawMessage(`[` + strconv.Itoa(pos+i) + `,[0,"x"],` + strconv.Itoa(len(text)-pos) + `]`)}
		res, err := svc.PushText(ctx, person, service.PushTextArgs{NoteID: n.NoteID, Rev: rev, ClientID: "bench", Updates: up})
		if err != nil || !res.Accepted {
			b.Fatalf("push %d: %+v %v", i, res, err)
		}
		rev = res.Rev
	}
	b.StopTimer()
	hist, err := svc.Store.History(ctx, store.TypeNote, n.NoteID)
	if err != nil {
		b.Fatal(err)
	}
	var bytes int64
	for _, v := range hist[1:] {
		bytes += v.Bytes
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "history-B/push")
}
