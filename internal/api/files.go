package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/service"
)

// A Note's files: the bytes go up as the raw request body (Content-Type is
// the file's type, the name is the name query parameter, percent-encoded
// UTF-8) and come down as an attachment. Both are for people signed in to
// the web app only: file content never reaches a token, which is how
// agents connect. The files' metadata is read with the files tab
// (GET /api/notes/{note_id}/tabs/files).

// MaxUploadBody is the body an upload may send: one byte over the file
// limit is read, so that the limit's own answer names it.
const MaxUploadBody = service.MaxFileBytes + 1

// UploadRequest is POST /api/notes/{note_id}/files: the body is the file.
type UploadRequest struct {
	NoteRequest
	UploadPrecondition
	Name        *string `query:"name" json:"-" required:"true" description:"The file's name (percent-encoded UTF-8)"`
	ContentType string  `header:"Content-Type" json:"-" description:"The file's media type (default application/octet-stream)"`
}

// UploadPrecondition is an upload's Precondition in headers only: the
// body is the file's bytes, so it has no expected_version to read (a
// request type with a JSON field would have its body decoded as JSON).
type UploadPrecondition struct {
	IfMatch        string `header:"If-Match" json:"-" description:"The version the upload is based on, as the ETag of the read it was based on: \"<version>\"."`
	IdempotencyKey string `header:"Idempotency-Key" json:"-" minLength:"8" maxLength:"128" description:"Names this upload: a resend with the same key and request answers the first result (Idempotency-Replayed: true)."`
}

func (p *UploadPrecondition) pre() *Precondition {
	return &Precondition{IfMatch: p.IfMatch, IdempotencyKey: p.IdempotencyKey}
}

// FileAdded is what an upload answers.
type FileAdded struct {
	NoteWrite
	File note.File `json:"file"`
}

var uploadFileDoc = doc{summary: "Upload a file (a person's act; the body is the file's bytes)", req: UploadRequest{}, rawBody: "*/*", resp: FileAdded{}, status: http.StatusCreated, write: true}

func (h *handler) uploadFile(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[UploadRequest](h, w, r, false)
	if !ok {
		return
	}
	var err error
	switch {
	case in.Name == nil:
		err = invalid("name", "is required: give the file's name in the name query parameter (percent-encoded UTF-8), e.g. ?name=report%%20%%C3%%A9t%%C3%%A9.pdf")
	case r.ContentLength > service.MaxFileBytes:
		err = problem.New(problem.Limit, "body", "the file is %d bytes; one file may hold at most %d bytes (%d MiB)", r.ContentLength, service.MaxFileBytes, service.MaxFileBytes>>20).
			With("limit", "file_bytes").With("max", service.MaxFileBytes)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.UploadFile(r.Context(), c.svc, service.UploadArgs{NoteID: in.NoteID, Guard: g, FileUpload: service.FileUpload{
		Name: *in.Name, ContentType: r.Header.Get("Content-Type"), Body: r.Body, Length: r.ContentLength}})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(in.NoteID)+"/files/"+url.PathEscape(res.File.ID))
	answer(w, http.StatusCreated, res.NoteWritten, FileAdded{NoteWrite: noteWrite(res.NoteWritten), File: res.File})
}

// FileRequest names one file of one Note.
type FileRequest struct {
	NoteRequest
	FileID string `path:"file_id" json:"-"`
}

var downloadFileDoc = doc{summary: "A file's bytes, as an attachment (a person's act)", req: FileRequest{}, media: "*/*"}

func (h *handler) downloadFile(w http.ResponseWriter, r *http.Request, c *caller) {
	in, err := bind[FileRequest](r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f, b, err := h.svc.OpenFile(r.Context(), c.svc, service.FileArgs{NoteID: in.NoteID, FileID: in.FileID})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer b.Close()
	hd := w.Header()
	hd.Set("Content-Type", f.ContentType)
	hd.Set("Content-Disposition", Attachment(f.Name))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("ETag", `"`+f.SHA256+`"`) // the bytes' hash: strong, and If-Range works
	hd.Set("Cache-Control", "private, no-cache")
	http.ServeContent(w, r, "", time.Time{}, b)
}

// FileWriteRequest is a write on one file.
type FileWriteRequest struct {
	FileRequest
	Precondition
}

var deleteFileDoc = doc{summary: "Remove a file from the files tab (a person's act)", req: FileWriteRequest{}, write: true}

func (h *handler) deleteFile(w http.ResponseWriter, r *http.Request, c *caller) {
	in, g, ok := bindWrite[FileWriteRequest](h, w, r, true)
	if !ok {
		return
	}
	res, err := h.svc.DeleteFile(r.Context(), c.svc, service.FileArgs{NoteID: in.NoteID, FileID: in.FileID, Guard: g})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer(w, http.StatusNoContent, res, nil)
}

// Attachment is the Content-Disposition of a download named name (RFC
// 6266): an ASCII fallback in filename, and the UTF-8 name in filename*
// (RFC 8187).
func Attachment(name string) string {
	var ascii strings.Builder
	for _, r := range name {
		switch {
		case r == '"' || r == '\\' || r < 0x20 || r == 0x7f:
			ascii.WriteByte('_')
		case r < 0x80:
			ascii.WriteRune(r)
		default:
			ascii.WriteByte('_')
		}
	}
	var ext strings.Builder
	for _, b := range []byte(name) {
		if b < 0x80 && (b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("!#$&+-.^_`|~", b) >= 0) {
			ext.WriteByte(b)
			continue
		}
		ext.WriteString("%" + strings.ToUpper(hex2(b)))
	}
	return `attachment; filename="` + ascii.String() + `"; filename*=UTF-8''` + ext.String()
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}
