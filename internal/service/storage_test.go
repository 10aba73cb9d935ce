package service_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// gatedBody is an upload's body that says when it is first read (the
// upload has passed its checks and is storing) and then waits for open.
type gatedBody struct {
	r       io.Reader
	reading chan struct{}
	open    chan struct{}
	once    bool
}

func (g *gatedBody) Read(p []byte) (int, error) {
	if !g.once {
		g.once = true
		close(g.reading)
		<-g.open
	}
	return g.r.Read(p)
}

// TestUploadsAtOnceShareTheRoom: while one upload is storing its bytes,
// another that would pass the workspace's limit together with it is
// refused; once the first is stored, its bytes count as stored ones.
func TestUploadsAtOnceShareTheRoom(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		f.svc.MaxWorkspaceBytes = 10000
		for round, known := range []bool{true, false} {
			name := map[bool]string{true: "length known", false: "length not known"}[known]
			v := f.version(t)
			length := func(n int64) int64 {
				if known {
					return n
				}
				return -1
			}
			first := &gatedBody{r: bytes.NewReader(bytes.Repeat([]byte{'a', byte(v)}, 3000)), reading: make(chan struct{}), open: make(chan struct{})}
			done := make(chan error, 1)
			go func() {
				_, err := f.svc.UploadFile(ctx, f.person, service.UploadArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: v},
					FileUpload: service.FileUpload{Name: "first.bin", Body: first, Length: length(6000)}})
				done <- err
			}()
			<-first.reading
			second := bytes.Repeat([]byte{'b', byte(v)}, 3000)
			_, err := f.svc.UploadFile(ctx, f.person, service.UploadArgs{NoteID: f.noteID, Guard: service.Guard{ExpectedVersion: v},
				FileUpload: service.FileUpload{Name: "second.bin", Body: bytes.NewReader(second), Length: int64(len(second))}})
			var p *problem.Problem
			if !errors.As(err, &p) || p.Code != problem.Limit || p.Details["limit"] != "workspace_bytes" || !strings.Contains(p.Message, "--max-workspace-bytes") {
				t.Fatalf("%s: the second upload while the first stores: %v", name, err)
			}
			close(first.open)
			if err := <-done; err != nil {
				t.Fatalf("%s: the first upload: %v", name, err)
			}
			// The first's 6000 bytes are stored, and the refused one's none.
			u, err := f.svc.Store.Blobs().Usage(ctx, f.ws)
			if err != nil || u.Bytes != int64(6000*(round+1)) || u.UnreferencedBytes != 0 {
				t.Fatalf("%s: usage %+v %v", name, u, err)
			}
			f.svc.MaxWorkspaceBytes += 6000 // room for the next round
		}
	})
}

// TestNoteCreatedWithFilesMarksThem: a Note created with files (an
// import) marks their blobs referenced in its creating write, so the
// collector never removes them, even once a later version drops the file.
func TestNoteCreatedWithFilesMarksThem(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		body := []byte("a file brought by an import")
		sha, size, err := f.svc.Store.Blobs().Put(ctx, f.ws, bytes.NewReader(body), 100)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CreateNoteFrom(ctx, f.person, service.CreateNoteArgs{Title: "Imported"}, func(d *note.Doc) error {
			note.AddFile(d, "a.txt", "text/plain", size, sha, time.Now())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if u, err := f.svc.Store.Blobs().Usage(ctx, f.ws); err != nil || u.Count != 1 || u.UnreferencedCount != 0 {
			t.Fatalf("usage after the creation: %+v %v", u, err)
		}
	})
}
