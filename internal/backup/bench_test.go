package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"foundry/internal/backup"
	"foundry/internal/service"
)

// BenchmarkBackup takes backups of a data folder of 200 Notes (10 edits
// each) and 40 files of 64 KiB, idle: the cost of a backup itself, copy and
// checks (integrity_check, every hash, every named blob). It reports the
// bytes backed up per second and the folder's size.
func BenchmarkBackup(b *testing.B) {
	ctx := context.Background()
	data := filepath.Join(b.TempDir(), "data")
	s := serve(b, data)
	svc := s.srv.Service
	var notes []string
	for i := range 200 {
		n, err := svc.CreateNote(ctx, s.op, service.CreateNoteArgs{Title: fmt.Sprintf("Note %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		notes = append(notes, n.NoteID)
		for k := range 10 {
			text := strings.Repeat(fmt.Sprintf("line %d of note %d\n", k, i), 20)
			if _, err := svc.EditNoteTab(ctx, s.op, service.EditTabArgs{NoteID: n.NoteID, TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range 40 {
		body := bytes.Repeat([]byte{byte(i)}, 64<<10)
		if _, err := svc.UploadFile(ctx, s.op, service.UploadArgs{NoteID: notes[i], FileUpload: service.FileUpload{Name: "f", Body: bytes.NewReader(body), Length: int64(len(body))}}); err != nil {
			b.Fatal(err)
		}
	}
	s.st.Close()
	var size int64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m, err := backup.Backup(ctx, data, filepath.Join(b.TempDir(), fmt.Sprint(i)), backup.Options{})
		if err != nil {
			b.Fatal(err)
		}
		size = m.Database.Size + m.Counts.BlobBytes
	}
	b.SetBytes(size)
	b.ReportMetric(float64(size), "bytes/backup")
}
