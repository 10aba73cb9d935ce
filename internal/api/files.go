package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// A Note's files: the bytes go up as the raw request body (Content-Type is
// the file's type, the name is the name query parameter, percent-encoded
// UTF-8) and come down as an attachment. Both are for people signed in to
// the web app only: file content never reaches a token, which is how
// agents connect (service.FilesForPeople). The files' metadata is read
// with the files tab (GET /api/notes/{id}/tabs/files).

// MaxUploadBody is the body an upload may send: one byte over the file
// limit is read, so that the limit's own answer names it.
const MaxUploadBody = service.MaxFileBytes + 1

// filesForPeople refuses a token at a file's content.
func filesForPeople(w http.ResponseWriter, c *caller) bool {
	if c.person == nil {
		writeProblem(w, http.StatusForbidden, problem.New(service.CodeFilesForPeople, "Authorization", service.FilesForPeople))
		return false
	}
	return true
}

func (h *handler) uploadFile(w http.ResponseWriter, r *http.Request, c *caller) {
	if !filesForPeople(w, c) {
		return
	}
	id, err := noteID(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	for k, v := range q {
		if k != "name" {
			writeProblem(w, 0, problem.New(problem.Invalid, k, "is not a parameter of POST /api/notes/{id}/files, which takes name (the file's name, percent-encoded UTF-8)"))
			return
		}
		if len(v) > 1 {
			writeProblem(w, 0, problem.New(problem.Invalid, k, "is given %d times: give it once", len(v)))
			return
		}
	}
	if _, ok := q["name"]; !ok {
		writeProblem(w, 0, problem.New(problem.Invalid, "name", "is required: give the file's name in the name query parameter (percent-encoded UTF-8), e.g. ?name=report%%20%%C3%%A9t%%C3%%A9.pdf"))
		return
	}
	if r.ContentLength > service.MaxFileBytes {
		writeProblem(w, 0, problem.New(problem.Limit, "body", "the file is %d bytes; one file may hold at most %d bytes (%d MiB)", r.ContentLength, service.MaxFileBytes, service.MaxFileBytes>>20).
			With("limit", "file_bytes").With("max", service.MaxFileBytes))
		return
	}
	if len(r.Header.Values("If-Match")) == 0 {
		writeProblem(w, 0, problem.New(CodePreconditionRequired, "If-Match", "an upload must say which version of the Note it was based on: send If-Match: \"<version>\" (the ETag of GET /api/notes/%s or of its files tab)", problem.Excerpt(id)))
		return
	}
	pw, err := write(r, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.svc.PeopleUploadFile(r.Context(), c.svc, id, service.FileUpload{
		Name: q.Get("name"), ContentType: r.Header.Get("Content-Type"), Body: r.Body, Length: r.ContentLength,
	}, pw)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"notes/"+url.PathEscape(id)+"/files/"+url.PathEscape(res.File.ID))
	h.answer(w, http.StatusCreated, res.PeopleResult, res)
}

func (h *handler) downloadFile(w http.ResponseWriter, r *http.Request, c *caller) {
	if !filesForPeople(w, c) {
		return
	}
	id, fileID, err := noteAndFile(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f, b, err := h.svc.PeopleOpenFile(r.Context(), c.svc, id, fileID)
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

func (h *handler) deleteFile(w http.ResponseWriter, r *http.Request, c *caller) {
	if !filesForPeople(w, c) {
		return
	}
	id, fileID, err := noteAndFile(r)
	var res service.PeopleResult
	if err == nil {
		var pw service.PeopleWrite
		if _, pw, err = writeBody[versionBody](r, true); err == nil {
			res, err = h.svc.PeopleDeleteFile(r.Context(), c.svc, id, fileID, pw)
		}
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.answer(w, http.StatusNoContent, res, nil)
}

func noteAndFile(r *http.Request) (id, file string, err error) {
	if id, err = noteID(r); err != nil {
		return "", "", err
	}
	file, err = pathID(r, "file_id")
	return id, file, err
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
