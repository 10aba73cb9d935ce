package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"foundry/internal/auth"
	"foundry/internal/note"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// BenchmarkHistory: a Note with FOUNDRY_BENCH_HISTORY (5,000) versions,
// each one person's edit of the text, over real HTTP on loopback:
//
//   - page: GET /api/notes/{id}/history, the newest page a person's
//     history view asks for first (ms/read, KB/answer);
//   - 412_base_1 and 412_base_recent: a text save based on version 1, and
//     on the version before the current one, refused with 412 and the
//     versions since its base (ms/412, KB/answer).
func BenchmarkHistory(b *testing.B) {
	versions := 5000
	if s := os.Getenv("FOUNDRY_BENCH_HISTORY"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			b.Fatalf("FOUNDRY_BENCH_HISTORY=%q: want a number of versions ≥ 2", s)
		}
		versions = n
	}
	ctx := context.Background()
	e := servertest.Start(b, servertest.Options{})
	svc := e.Server.Service
	person := service.Person(e.Owner.Workspace.ID, e.Owner.User.ID, e.Owner.User.Role)
	n, err := svc.CreateNote(ctx, person, service.CreateNoteArgs{Title: "Long history", Approved: true})
	if err != nil {
		b.Fatal(err)
	}
	id, v := n.NoteID, n.Version
	t0 := time.Now()
	for v < int64(versions) {
		text := fmt.Sprintf("# Plan\n\nLine %d of the plan.\n", v)
		res, err := svc.EditNoteTab(ctx, person, service.EditTabArgs{NoteID: id, TabID: note.TypeMarkdown, ExpectedVersion: v, Operation: "replace_text", Text: &text})
		if err != nil {
			b.Fatal(err)
		}
		v = res.Version
	}
	b.Logf("%d versions written in %v", v, time.Since(t0).Round(time.Millisecond))
	token := e.Token(b, []string{id}, auth.ScopeRead, auth.ScopeWrite)
	send := func(method, path, body string, header map[string]string) (int, int) {
		r, err := http.NewRequest(method, e.URL+path, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		for k, x := range header {
			r.Header.Set(k, x)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		n, err := io.Copy(io.Discard, res.Body)
		if err != nil {
			b.Fatal(err)
		}
		return res.StatusCode, int(n)
	}
	measure := func(b *testing.B, unit string, call func() (int, int), want int) {
		var size int
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			status, n := call()
			if status != want {
				b.Fatalf("answered %d, want %d", status, want)
			}
			size = n
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/"+unit)
		b.ReportMetric(float64(size)/1024, "KB/answer")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("page", func(b *testing.B) {
		measure(b, "read", func() (int, int) { return send("GET", "/api/notes/"+id+"/history", "", nil) }, http.StatusOK)
	})
	stale := func(base int64) func() (int, int) {
		return func() (int, int) {
			return send("PUT", "/api/notes/"+id+"/tabs/markdown/text", `{"text":"a stale save"}`, map[string]string{"If-Match": fmt.Sprintf(`"%d"`, base)})
		}
	}
	b.Run("412_base_1", func(b *testing.B) { measure(b, "412", stale(1), http.StatusPreconditionFailed) })
	b.Run("412_base_recent", func(b *testing.B) { measure(b, "412", stale(v-1), http.StatusPreconditionFailed) })
}
