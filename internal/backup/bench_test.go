package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/backup"
	"foundry/internal/service"
)

// fill gives s 200 Notes (10 edits each) and 40 files of 64 KiB.
func fill(b *testing.B, s *served) []string {
	ctx := context.Background()
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
	return notes
}

// BenchmarkBackup takes backups of a data folder of 200 Notes (10 edits
// each) and 40 files of 64 KiB, idle: the cost of a backup itself, copy and
// checks (integrity_check, every hash, every named blob). It reports the
// bytes backed up per second and the folder's size.
func BenchmarkBackup(b *testing.B) {
	ctx := context.Background()
	data := filepath.Join(b.TempDir(), "data")
	s := serve(b, data)
	fill(b, s)
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

// BenchmarkEditsDuringBackup measures a person's edits to a served data
// folder, one after another, while backups of it are taken back to back
// ("backing-up") and while none is ("idle"): what a backup costs the
// writes it runs beside. It reports the median and 99th percentile of an
// edit's latency and the backups taken.
func BenchmarkEditsDuringBackup(b *testing.B) {
	for _, during := range []bool{false, true} {
		name := "idle"
		if during {
			name = "backing-up"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			data := filepath.Join(b.TempDir(), "data")
			s := serve(b, data)
			notes := fill(b, s)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			backups := 0
			if during {
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := backup.Backup(ctx, data, filepath.Join(b.TempDir(), fmt.Sprint(i)), backup.Options{}); err != nil {
							b.Error(err)
							return
						}
						backups++
					}
				})
			}
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				text := fmt.Sprintf("edit %d", i)
				t0 := time.Now()
				if _, err := s.srv.Service.EditNoteTab(ctx, s.op, service.EditTabArgs{NoteID: notes[i%len(notes)], TabID: "markdown", Operation: "replace_text", Text: &text}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(backups), "backups")
		})
	}
}
