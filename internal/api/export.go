package api

import (
	"net/http"
	"time"

	"foundry/internal/service"
)

// A Note's export: the same archive `foundry export --note` writes, as a
// zip download. It holds the files' bytes, so it is a person's act.

// ExportRequest is GET /api/notes/{note_id}/export.
type ExportRequest struct {
	NoteRequest
	History bool `query:"history" json:"-" description:"true: add every version of the Note, with who wrote it and when"`
}

var exportNoteDoc = doc{summary: "The Note as a zip: markdown, sheets as CSV and JSON, slides, sources, the files (a person's act)", req: ExportRequest{}, media: "application/zip"}

func (h *handler) exportNote(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[ExportRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The Note is read before the first byte is written, so a refusal is
	// still a problem answer; the zip streams after it.
	tabs, err := h.svc.ListNoteTabs(r.Context(), c.svc, in.NoteID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hw := &lazyHeaders{w: w, name: service.ExportDirName(tabs.Title, tabs.NoteID) + ".zip"}
	zw := service.NewZipWriter(hw, time.Now())
	if _, err := h.svc.ExportNote(r.Context(), c.svc, in.NoteID, zw, service.ExportOptions{History: in.History}); err != nil {
		if !hw.wrote {
			h.fail(w, r, err)
			return
		}
		// Half a zip was sent: end the response broken, so the download
		// fails instead of saving a short archive.
		h.log.Error("api: export failed mid-stream", "note_id", in.NoteID, "err", err)
		panic(http.ErrAbortHandler)
	}
	if err := zw.Close(); err != nil {
		if hw.wrote {
			panic(http.ErrAbortHandler)
		}
		h.fail(w, r, err)
	}
}

// lazyHeaders sets the download's headers on its first byte, so that an
// export refused before it wrote anything answers a problem instead.
type lazyHeaders struct {
	w     http.ResponseWriter
	name  string
	wrote bool
}

func (l *lazyHeaders) Write(p []byte) (int, error) {
	if !l.wrote {
		l.wrote = true
		hd := l.w.Header()
		hd.Set("Content-Type", "application/zip")
		hd.Set("Content-Disposition", Attachment(l.name))
		hd.Set("Cache-Control", "private, no-store")
		l.w.WriteHeader(http.StatusOK)
	}
	return l.w.Write(p)
}
