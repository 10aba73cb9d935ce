package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"unicode/utf8"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// A Note's files: the bytes of a Note's files live in the store's blob
// store (store.Blobs), by SHA-256, per workspace; the files tab holds their
// metadata (note.File), written by the one guarded people's write. File
// content is for people only: no token — and so no agent, whose every door
// is a token — uploads, downloads or deletes a file, and no agent's read
// says where the bytes are. Agents see the metadata only.
//
// Blobs a version names are never deleted: a file deleted from a Note is
// gone from its newest version, and restoring a version that had it brings
// it back with its bytes. The bytes of an upload whose write was refused
// are removed after a grace period (store.BlobIndex), and count against the
// workspace's storage until then (storage.go).

// Limits of files.
const (
	MaxFileBytes      = 25 << 20  // one file
	MaxFilesPerNote   = 100       // files in one Note's files tab
	MaxNoteFileBytes  = 200 << 20 // all the files of one Note together
	MaxFileNameRunes  = 255
	MaxFileNameBytes  = 1020
	MaxContentTypeLen = 255
)

// FilesForPeople is why an agent may not move a file's bytes.
const FilesForPeople = "file content is for people in Foundry's web app: an agent's token can neither upload, download nor delete a Note's files. Sign in to the web app to do it; agents see the files' metadata only"

func (c Caller) filesForPeople() error {
	if c.IsAgent() {
		return problem.New(PersonOnly, "", FilesForPeople)
	}
	return nil
}

// CheckFileName applies the rules of a file's name and returns it trimmed:
// a name, not a path, with no control, bidi or invisible characters.
func CheckFileName(name string) (string, error) {
	n := strings.TrimSpace(name)
	if !utf8.ValidString(n) {
		return "", problem.New(problem.Invalid, "name", "the file name is not valid UTF-8: send the name's UTF-8 bytes")
	}
	if n == "" {
		return "", problem.New(problem.Invalid, "name", "is required: give the file's name")
	}
	for _, r := range n {
		if note.IsHiddenRune(r) {
			return "", problem.New(problem.Invalid, "name", "the file name contains the control or bidi character %U; names may not hold control, bidi or invisible characters", r)
		}
		if r == '/' || r == '\\' {
			return "", problem.New(problem.Invalid, "name", "the file name contains %q: give the file's name, not a path", r)
		}
	}
	if n == "." || n == ".." {
		return "", problem.New(problem.Invalid, "name", "%q is not a file name: give the file's name", n)
	}
	if k := utf8.RuneCountInString(n); k > MaxFileNameRunes {
		return "", problem.New(problem.Limit, "name", "the file name is %d characters; at most %d characters (file name limit)", k, MaxFileNameRunes)
	}
	if len(n) > MaxFileNameBytes {
		return "", problem.New(problem.Limit, "name", "the file name is %d bytes in UTF-8; at most %d bytes (file name limit)", len(n), MaxFileNameBytes)
	}
	return n, nil
}

// CheckContentType applies the rules of a file's media type and returns it
// in canonical form ("" is application/octet-stream).
func CheckContentType(ct string) (string, error) {
	ct = strings.TrimSpace(ct)
	if ct == "" {
		return "application/octet-stream", nil
	}
	if len(ct) > MaxContentTypeLen {
		return "", problem.New(problem.Limit, "content_type", "is %d bytes; a file's media type has at most %d", len(ct), MaxContentTypeLen)
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.Contains(mt, "/") {
		return "", problem.New(problem.Invalid, "content_type", "%q is not a media type: send the file's type, e.g. application/pdf, or application/octet-stream", problem.Excerpt(ct))
	}
	out := mime.FormatMediaType(mt, params)
	if out == "" {
		return "", problem.New(problem.Invalid, "content_type", "%q is not a media type: send the file's type, e.g. application/pdf, or application/octet-stream", problem.Excerpt(ct))
	}
	return out, nil
}

// FileUpload is one file a person sends.
type FileUpload struct {
	Name, ContentType string
	Body              io.Reader
	Length            int64 // the body's length if known, else -1
}

// UploadArgs are one file a person sends to a Note.
type UploadArgs struct {
	NoteID string
	FileUpload
	Guard
}

// FileAdded is what an upload answers: the file it added.
type FileAdded struct {
	NoteWritten
	File note.File `json:"file"`
}

func filesUsed(d *note.Doc) int64 {
	var n int64
	for _, f := range d.Files {
		n += f.SizeBytes
	}
	return n
}

// fileLimits refuses one more file of size bytes (-1: not known yet).
func fileLimits(d *note.Doc, size int64) error {
	if len(d.Files) >= MaxFilesPerNote {
		return problem.New(problem.Limit, "files", "the Note has %d files, the most one Note may hold (%d files per Note); delete one first", len(d.Files), MaxFilesPerNote).
			With("limit", "files_per_note").With("max", MaxFilesPerNote)
	}
	if size > MaxFileBytes {
		return fileTooLarge()
	}
	if used := filesUsed(d); size >= 0 && used+size > MaxNoteFileBytes {
		return problem.New(problem.Limit, "body", "the Note's files hold %d bytes; this file of %d bytes would pass the %d bytes (%d MiB) all the files of one Note may hold together; delete some first",
			used, size, MaxNoteFileBytes, MaxNoteFileBytes>>20).With("limit", "bytes_per_note").With("max", MaxNoteFileBytes)
	}
	return nil
}

func fileTooLarge() *problem.Problem {
	return problem.New(problem.Limit, "body", "the file is over %d bytes (%d MiB), the most one file may hold", MaxFileBytes, MaxFileBytes>>20).
		With("limit", "file_bytes").With("max", MaxFileBytes)
}

// UploadFile stores a file's bytes and adds its metadata to the files tab
// in one guarded write. The bytes are streamed into the blob store (hashed
// as they are read) before the write, at most what the workspace's storage
// limit leaves; the write marks the blob referenced. A refused write (a
// stale version) leaves them stored, unreferenced, until the collector
// removes them after its grace period: the same bytes sent again meanwhile
// are the same blob.
func (s *Service) UploadFile(ctx context.Context, c Caller, a UploadArgs) (FileAdded, error) {
	if err := c.filesForPeople(); err != nil {
		return FileAdded{}, err
	}
	name, err := CheckFileName(a.Name)
	if err != nil {
		return FileAdded{}, err
	}
	ct, err := CheckContentType(a.ContentType)
	if err != nil {
		return FileAdded{}, err
	}
	if a.ExpectedVersion < 1 && !c.versionFree() {
		return FileAdded{}, problem.New(PreconditionRequired, "expected_version", "an upload must say which version of the Note it was based on (the version a read answered, ≥ 1)")
	}
	if a.IdempotencyKey != "" {
		if err := checkKey(a.IdempotencyKey); err != nil {
			return FileAdded{}, err
		}
	}
	// The Note must be there for c before a byte is stored; the limits are
	// checked now against what it holds, and again in the write.
	r, d, err := s.noteFor(ctx, c, a.NoteID)
	if err != nil {
		return FileAdded{}, err
	}
	if err := fileLimits(d, a.Length); err != nil {
		return FileAdded{}, err
	}
	limit := int64(MaxFileBytes)
	left := max(MaxNoteFileBytes-filesUsed(d), 0)
	sha, size, err := s.storeBytes(ctx, r.Workspace, a.Body, a.Length, min(limit, left))
	var tl *store.BlobTooLargeError
	switch {
	case errors.As(err, &tl) && tl.Limit < limit:
		return FileAdded{}, fileLimits(d, tl.Limit+1)
	case errors.As(err, &tl):
		return FileAdded{}, fileTooLarge()
	case err != nil:
		return FileAdded{}, err
	}
	res, err := noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "file_added", sizeField: "files", meaning: struct {
		Op, Name, ContentType, SHA256 string
		Size                          int64
	}{"add_file", name, ct, sha, size}}, func(_ *store.Resource, d *note.Doc, ch *store.Change) (FileAdded, []string, error) {
		if err := fileLimits(d, size); err != nil {
			return FileAdded{}, nil, err
		}
		ch.Blobs = []string{sha}
		return FileAdded{File: note.AddFile(d, name, ct, size, sha, s.Now())}, []string{note.TypeFiles}, nil
	})
	if errors.Is(err, store.ErrBlobMissing) {
		return res, blobGone()
	}
	return res, err
}

func fileNotFound(fileID string) *problem.Problem {
	return problem.New(problem.NotFound, "file_id", "no file has the ID %s in this Note; list its files", note.Quote(fileID))
}

// FileArgs name one file of one Note, with the guard of a write on it.
type FileArgs struct {
	NoteID string `json:"note_id"`
	FileID string `json:"file_id"`
	Guard
}

// OpenFile is a file of a Note c may see, and its bytes.
func (s *Service) OpenFile(ctx context.Context, c Caller, a FileArgs) (note.File, store.Blob, error) {
	if err := c.filesForPeople(); err != nil {
		return note.File{}, nil, err
	}
	if err := CheckID("file_id", a.FileID); err != nil {
		return note.File{}, nil, err
	}
	r, d, err := s.noteFor(ctx, c, a.NoteID)
	if err != nil {
		return note.File{}, nil, err
	}
	for _, f := range d.Files {
		if f.ID != a.FileID {
			continue
		}
		b, err := s.Store.Blobs().Open(ctx, r.Workspace, f.SHA256)
		if errors.Is(err, store.ErrNotFound) {
			return note.File{}, nil, fmt.Errorf("file %s of Note %s: its bytes (%s) are not in the blob store", a.FileID, a.NoteID, f.SHA256)
		}
		return f, b, err
	}
	return note.File{}, nil, fileNotFound(a.FileID)
}

// DeleteFile removes a file from the files tab (a person's act). Its bytes
// stay: an older version still names them.
func (s *Service) DeleteFile(ctx context.Context, c Caller, a FileArgs) (NoteWritten, error) {
	if err := c.filesForPeople(); err != nil {
		return NoteWritten{}, err
	}
	if err := CheckID("file_id", a.FileID); err != nil {
		return NoteWritten{}, err
	}
	return noteWrite(ctx, s, c, a.NoteID, a.Guard, noteOp{kind: "file_deleted", sizeField: "file_id", meaning: struct{ Op, File string }{"delete_file", a.FileID}},
		func(_ *store.Resource, d *note.Doc, _ *store.Change) (NoteWritten, []string, error) {
			for i, f := range d.Files {
				if f.ID == a.FileID {
					d.Files = append(d.Files[:i:i], d.Files[i+1:]...)
					return NoteWritten{}, []string{note.TypeFiles}, nil
				}
			}
			return NoteWritten{}, nil, fileNotFound(a.FileID)
		})
}
