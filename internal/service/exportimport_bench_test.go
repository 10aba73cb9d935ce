package service_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"foundry/internal/note"
	"foundry/internal/service"
	"foundry/internal/store/sqlite"
)

// BenchmarkExportImport exports one full Note (a 1 MiB markdown tab, a
// 200 × 50 sheet, a 20-slide deck, four 1 MiB files) to a zip and imports
// that zip, on SQLite: what an operator's export --all and import cost a
// Note of this size.
func BenchmarkExportImport(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st)
	o, _, err := svc.Bootstrap(ctx, "bench", "owner@example.org")
	if err != nil {
		b.Fatal(err)
	}
	op := service.Operator(o)
	n, err := svc.CreateNoteFrom(ctx, op, service.CreateNoteArgs{Title: "Big"}, func(d *note.Doc) error {
		line := "A line of the report, ünïcödé.\n"
		if err := note.ReplaceText(d, note.TypeMarkdown, strings.Repeat(line, (note.MaxMarkdownBytes-64)/len(line))); err != nil {
			return err
		}
		sh, _ := note.CreateTab(d, note.TypeSheet, "Data", nil, svc.Now())
		rows := make([][]any, 200)
		for r := range rows {
			rows[r] = make([]any, 50)
			for c := range rows[r] {
				rows[r][c] = float64(r*50 + c)
			}
		}
		t, _ := note.FindTab(d, sh.ID)
		t.Sheets[0].Cells = rows
		deck, _ := note.CreateTab(d, note.TypeSlides, "Deck", nil, svc.Now())
		var outline []note.SlideInput
		for i := range 20 {
			outline = append(outline, note.SlideInput{Title: fmt.Sprintf("Slide %d", i), Body: strings.Repeat("body ", 100)})
		}
		_, err := note.SlidesAddOutline(d, deck.ID, outline)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 4 {
		body := bytes.Repeat([]byte{byte(i)}, 1<<20)
		if _, err := svc.UploadFile(ctx, op, service.UploadArgs{NoteID: n.NoteID, FileUpload: service.FileUpload{Name: fmt.Sprintf("f%d.bin", i), Body: bytes.NewReader(body), Length: int64(len(body))}}); err != nil {
			b.Fatal(err)
		}
	}
	export := func() []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		if _, err := svc.ExportNote(ctx, op, n.NoteID, zw, service.ExportOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
		return buf.Bytes()
	}
	b.Run("export", func(b *testing.B) {
		var raw []byte
		for b.Loop() {
			raw = export()
		}
		zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			b.Fatal(err)
		}
		var content uint64 // what the archive holds, uncompressed
		for _, f := range zr.File {
			content += f.UncompressedSize64
		}
		b.ReportMetric(float64(content), "content-bytes")
		b.ReportMetric(float64(content)/(1<<20)/(b.Elapsed().Seconds()/float64(b.N)), "MiB/s")
	})
	b.Run("import", func(b *testing.B) {
		raw := export()
		for b.Loop() {
			zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
			if err != nil {
				b.Fatal(err)
			}
			res, err := svc.ImportArchive(ctx, op, service.NewZipArchive(zr), service.ImportOptions{})
			if err != nil || len(res.Notes) != 1 {
				b.Fatalf("import: %+v %v", res, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/Note")
	})
}
