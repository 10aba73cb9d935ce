package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"foundry/internal/api"
	"foundry/internal/auth"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
)

// filesRaw sends a request as the owner (or as bearer, or as who) with a
// raw body, and answers the response and its whole body.
type filesRaw struct {
	method, path string
	body         io.Reader
	header       map[string]string
	bearer       string
	as           *browser
}

func (e *notesEnv) filesDo(t *testing.T, q filesRaw) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequest(q.method, e.URL+q.path, q.body)
	if err != nil {
		t.Fatal(err)
	}
	who := e.owner
	if q.as != nil {
		who = *q.as
	}
	if q.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+q.bearer)
	} else {
		r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: who.secret})
		if q.method != "GET" && q.method != "HEAD" {
			r.Header.Set(auth.CSRFHeader, who.csrf)
		}
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, raw
}

// filesProblem decodes a problem answer, failing unless it is one with
// status and code.
func filesProblem(t *testing.T, what string, res *http.Response, raw []byte, status int, code string) map[string]any {
	t.Helper()
	var body map[string]any
	if res.StatusCode != status || res.Header.Get("Content-Type") != api.ProblemContentType || json.Unmarshal(raw, &body) != nil || body["code"] != code {
		t.Fatalf("%s: %d %s %s; want %d %s as problem+json", what, res.StatusCode, res.Header.Get("Content-Type"), raw, status, code)
	}
	return body
}

// filesUpload uploads data as name, based on version v, with key ("" none).
func (e *notesEnv) filesUpload(t *testing.T, id, name, ct string, data []byte, v int64, key string) (*http.Response, map[string]any, []byte) {
	t.Helper()
	h := map[string]string{"Content-Type": ct}
	if v > 0 {
		h["If-Match"] = fmt.Sprintf(`"%d"`, v)
	}
	if key != "" {
		h[api.HeaderKey] = key
	}
	res, raw := e.filesDo(t, filesRaw{method: "POST", path: "/api/notes/" + id + "/files?name=" + url.QueryEscape(name), body: bytes.NewReader(data), header: h})
	var body map[string]any
	json.Unmarshal(raw, &body)
	return res, body, raw
}

func filesHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestFilesUploadDownloadDelete(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Files", true)
		data := bytes.Repeat([]byte("Foundry\x00\xff file bytes "), 5000)
		name := `Rapport "été" 2026.pdf`

		// No precondition: 428, and nothing is written.
		res, _, raw := e.filesUpload(t, id, name, "application/pdf", data, 0, "")
		filesProblem(t, "upload without If-Match", res, raw, http.StatusPreconditionRequired, service.PreconditionRequired)

		res, body, raw := e.filesUpload(t, id, name, "application/pdf", data, v, "upload-key-0001")
		if res.StatusCode != http.StatusCreated || res.Header.Get("ETag") != fmt.Sprintf(`"%d"`, v+1) {
			t.Fatalf("upload: %d %s", res.StatusCode, raw)
		}
		f, _ := body["file"].(map[string]any)
		fileID, _ := f["file_id"].(string)
		if f["name"] != name || f["content_type"] != "application/pdf" || f["size_bytes"] != float64(len(data)) || f["sha256"] != filesHash(data) || fileID == "" {
			t.Fatalf("upload answered %s", raw)
		}
		if res.Header.Get("Location") != "/api/notes/"+id+"/files/"+fileID {
			t.Fatalf("Location %q", res.Header.Get("Location"))
		}
		// The same upload resent with its key: the first answer, replayed,
		// and one file in the tab.
		res2, body2, raw2 := e.filesUpload(t, id, name, "application/pdf", data, v, "upload-key-0001")
		if res2.StatusCode != http.StatusCreated || res2.Header.Get(api.HeaderReplayed) != "true" || body2["file"].(map[string]any)["file_id"] != fileID || body2["version"] != float64(v+1) {
			t.Fatalf("resent upload: %d %s %v", res2.StatusCode, raw2, res2.Header)
		}
		// The key for other bytes is refused.
		res3, _, raw3 := e.filesUpload(t, id, name, "application/pdf", []byte("other bytes"), v, "upload-key-0001")
		filesProblem(t, "the key for another file", res3, raw3, http.StatusUnprocessableEntity, "idempotency_key_reused")
		// A stale version: 412 naming what changed.
		res4, _, raw4 := e.filesUpload(t, id, "b.txt", "text/plain", []byte("late"), v, "")
		p := filesProblem(t, "upload on a stale version", res4, raw4, http.StatusPreconditionFailed, "version_conflict")
		if p["current_version"] != float64(v+1) {
			t.Fatalf("stale upload: %s", raw4)
		}
		tab := e.do(t, req{method: "GET", path: "/api/notes/" + id + "/tabs/files"})
		tab.want(t, "files tab", http.StatusOK, "")
		if files, _ := tab.body["files"].([]any); len(files) != 1 {
			t.Fatalf("files tab after upload, replay, reuse and conflict: %s", tab.raw)
		}

		// Download: the bytes, as an attachment that a browser does not run.
		path := "/api/notes/" + id + "/files/" + fileID
		res, got := e.filesDo(t, filesRaw{method: "GET", path: path})
		if res.StatusCode != http.StatusOK || !bytes.Equal(got, data) {
			t.Fatalf("download: %d, %d bytes (want %d)", res.StatusCode, len(got), len(data))
		}
		wantHeaders := map[string]string{
			"Content-Type":            "application/pdf",
			"Content-Disposition":     `attachment; filename="Rapport __t__ 2026.pdf"; filename*=UTF-8''Rapport%20%22%C3%A9t%C3%A9%22%202026.pdf`,
			"X-Content-Type-Options":  "nosniff",
			"Content-Security-Policy": "sandbox; default-src 'none'",
			"ETag":                    `"` + filesHash(data) + `"`,
		}
		for k, want := range wantHeaders {
			if got := res.Header.Get(k); got != want {
				t.Errorf("download %s = %q, want %q", k, got, want)
			}
		}
		// A range.
		res, got = e.filesDo(t, filesRaw{method: "GET", path: path, header: map[string]string{"Range": "bytes=10-19"}})
		if res.StatusCode != http.StatusPartialContent || !bytes.Equal(got, data[10:20]) {
			t.Fatalf("range: %d %q", res.StatusCode, got)
		}

		// Delete, with If-Match; then the file is gone but restoring the
		// version that had it brings it back, bytes and all.
		res, raw = e.filesDo(t, filesRaw{method: "DELETE", path: path})
		filesProblem(t, "delete without If-Match", res, raw, http.StatusPreconditionRequired, service.PreconditionRequired)
		res, raw = e.filesDo(t, filesRaw{method: "DELETE", path: path, header: map[string]string{"If-Match": fmt.Sprintf(`"%d"`, v)}})
		filesProblem(t, "delete on a stale version", res, raw, http.StatusPreconditionFailed, "version_conflict")
		res, raw = e.filesDo(t, filesRaw{method: "DELETE", path: path, header: map[string]string{"If-Match": fmt.Sprintf(`"%d"`, v+1)}})
		if res.StatusCode != http.StatusNoContent || res.Header.Get("ETag") != fmt.Sprintf(`"%d"`, v+2) {
			t.Fatalf("delete: %d %s", res.StatusCode, raw)
		}
		res, raw = e.filesDo(t, filesRaw{method: "GET", path: path})
		filesProblem(t, "download a deleted file", res, raw, http.StatusNotFound, "not_found")
		res, raw = e.filesDo(t, filesRaw{method: "DELETE", path: path, header: map[string]string{"If-Match": fmt.Sprintf(`"%d"`, v+2)}})
		filesProblem(t, "delete it again", res, raw, http.StatusNotFound, "not_found")
		e.do(t, req{method: "POST", path: "/api/notes/" + id + "/restore", body: map[string]any{"version": v + 1}, header: ifMatch(v + 2)}).
			want(t, "restore the version with the file", http.StatusOK, "")
		res, got = e.filesDo(t, filesRaw{method: "GET", path: path})
		if res.StatusCode != http.StatusOK || !bytes.Equal(got, data) {
			t.Fatalf("download after restore: %d, %d bytes", res.StatusCode, len(got))
		}
	})
}

func TestFilesRefusals(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Refusals", true)
		base := "/api/notes/" + id + "/files"
		bad := []struct{ what, name, field string }{
			{"an empty name", "   ", "name"},
			{"a control character", "a\x07b.txt", "name"},
			{"a bidi override", "invoice\u202Efdp.exe", "name"},
			{"a path", "../etc/passwd", "name"},
			{"a Windows path", `C:\x.txt`, "name"},
			{"dot-dot", "..", "name"},
			{"invalid UTF-8", "\xff\xfe.txt", "name"},
			{"a NUL", "a\x00.txt", "name"},
			{"a zero-width joiner only", "\u2066", "name"},
			{"too long", strings.Repeat("é", service.MaxFileNameRunes+1), "name"},
		}
		for _, c := range bad {
			res, body, raw := e.filesUpload(t, id, c.name, "text/plain", []byte("x"), v, "")
			if res.StatusCode/100 != 4 || body["field"] != c.field || res.Header.Get("Content-Type") != api.ProblemContentType {
				t.Errorf("%s: %d %s; want a 4xx problem naming %s", c.what, res.StatusCode, raw, c.field)
			}
		}
		res, raw := e.filesDo(t, filesRaw{method: "POST", path: base, body: strings.NewReader("x"), header: ifMatch(v)})
		if p := filesProblem(t, "no name", res, raw, http.StatusBadRequest, "invalid_argument"); p["field"] != "name" {
			t.Fatalf("no name: %s", raw)
		}
		res, raw = e.filesDo(t, filesRaw{method: "POST", path: base + "?name=a&name=b", body: strings.NewReader("x"), header: ifMatch(v)})
		filesProblem(t, "two names", res, raw, http.StatusBadRequest, "invalid_argument")
		res, raw = e.filesDo(t, filesRaw{method: "POST", path: base + "?name=a&size=3", body: strings.NewReader("x"), header: ifMatch(v)})
		filesProblem(t, "an unknown parameter", res, raw, http.StatusBadRequest, "invalid_argument")
		r2, b2, raw2 := e.filesUpload(t, id, "a.txt", "not a type", []byte("x"), v, "")
		if r2.StatusCode != http.StatusBadRequest || b2["field"] != "Content-Type" {
			t.Fatalf("a bad Content-Type: %d %s", r2.StatusCode, raw2)
		}
		// Too large: one byte over the file limit, with and without a
		// Content-Length, is 413 naming the limit; nothing is added.
		big := make([]byte, service.MaxFileBytes+1)
		res, _, raw3 := e.filesUpload(t, id, "big.bin", "", big, v, "")
		p := filesProblem(t, "a file over the limit", res, raw3, http.StatusRequestEntityTooLarge, "limit_exceeded")
		if p["limit"] != "file_bytes" || p["max"] != float64(service.MaxFileBytes) || !strings.Contains(p["detail"].(string), "25 MiB") {
			t.Fatalf("too large: %s", raw3)
		}
		res, raw = e.filesDo(t, filesRaw{method: "POST", path: base + "?name=big.bin", body: io.MultiReader(bytes.NewReader(big)), header: map[string]string{"If-Match": fmt.Sprintf(`"%d"`, v), "Transfer-Encoding": "chunked"}})
		if p := filesProblem(t, "a chunked file over the limit", res, raw, http.StatusRequestEntityTooLarge, "limit_exceeded"); p["limit"] != "file_bytes" {
			t.Fatalf("chunked too large: %s", raw)
		}
		// Exactly at the limit is taken, and the content type defaults.
		res, body, raw := e.filesUpload(t, id, "exact.bin", "", big[:service.MaxFileBytes], v, "")
		if res.StatusCode != http.StatusCreated || body["file"].(map[string]any)["content_type"] != "application/octet-stream" {
			t.Fatalf("a file at the limit: %d %s", res.StatusCode, raw)
		}
		v++
		// Files per Note: fill the tab with small files, then one more.
		for i := 1; i < service.MaxFilesPerNote; i++ {
			res, _, raw := e.filesUpload(t, id, fmt.Sprintf("f%03d.txt", i), "text/plain", []byte{byte(i)}, v, "")
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("file %d: %d %s", i, res.StatusCode, raw)
			}
			v++
		}
		res, _, raw = e.filesUpload(t, id, "one-too-many.txt", "text/plain", []byte("x"), v, "")
		if p := filesProblem(t, "one file too many", res, raw, http.StatusRequestEntityTooLarge, "limit_exceeded"); p["limit"] != "files_per_note" || p["field"] != "files" {
			t.Fatalf("one too many: %s", raw)
		}
	})
}

// TestFilesBytesPerNote: the files of one Note hold at most
// MaxNoteFileBytes together; the upload that would pass it is refused
// naming that limit.
func TestFilesBytesPerNote(t *testing.T) {
	e := startNotes(t, nil)
	id, v := e.create(t, "Heavy", true)
	chunk := make([]byte, service.MaxFileBytes)
	n := service.MaxNoteFileBytes / service.MaxFileBytes
	for i := 0; i < n; i++ {
		chunk[0] = byte(i) // distinct blobs
		res, _, raw := e.filesUpload(t, id, fmt.Sprintf("part%d.bin", i), "", chunk, v, "")
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("part %d: %d %s", i, res.StatusCode, raw)
		}
		v++
	}
	res, _, raw := e.filesUpload(t, id, "last.bin", "", []byte("x"), v, "")
	if p := filesProblem(t, "a byte over the Note's files", res, raw, http.StatusRequestEntityTooLarge, "limit_exceeded"); p["limit"] != "bytes_per_note" {
		t.Fatalf("bytes per note: %s", raw)
	}
}

func TestFilesAreForPeopleOnly(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "People only", true)
		res, body, raw := e.filesUpload(t, id, "a.txt", "text/plain", []byte("secret bytes"), v, "")
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("upload: %d %s", res.StatusCode, raw)
		}
		path := "/api/notes/" + id + "/files/" + body["file"].(map[string]any)["file_id"].(string)
		tok := e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)
		for _, c := range []filesRaw{
			{method: "GET", path: path, bearer: tok},
			{method: "HEAD", path: path, bearer: tok},
			{method: "DELETE", path: path, bearer: tok, header: ifMatch(v + 1)},
			{method: "POST", path: "/api/notes/" + id + "/files?name=b.txt", bearer: tok, body: strings.NewReader("x"), header: ifMatch(v + 1)},
		} {
			res, raw := e.filesDo(t, c)
			if c.method == "HEAD" {
				if res.StatusCode != http.StatusForbidden || len(raw) != 0 {
					t.Errorf("HEAD by token: %d %q", res.StatusCode, raw)
				}
				continue
			}
			p := filesProblem(t, c.method+" by token", res, raw, http.StatusForbidden, service.PersonOnly)
			if !strings.Contains(p["detail"].(string), "file content is for people") || bytes.Contains(raw, []byte("secret bytes")) {
				t.Errorf("%s by token: %s", c.method, raw)
			}
		}
		// The file is still there, untouched by the token.
		res, got := e.filesDo(t, filesRaw{method: "GET", path: path})
		if res.StatusCode != http.StatusOK || string(got) != "secret bytes" {
			t.Fatalf("after the token's tries: %d %q", res.StatusCode, got)
		}
	})
}

// TestFilesForeignWorkspace: a person of another workspace finds neither
// the Note nor its file, and cannot add one.
func TestFilesForeignWorkspace(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Mine", true)
		res, body, raw := e.filesUpload(t, id, "a.txt", "text/plain", []byte("mine"), v, "")
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("upload: %d %s", res.StatusCode, raw)
		}
		fileID := body["file"].(map[string]any)["file_id"].(string)
		st := e.Server.Store
		now := time.Now().UTC()
		ws := store.Workspace{ID: store.NewID("ws"), Name: "Elsewhere", CreatedAt: now}
		u := store.User{ID: store.NewID("usr"), Workspace: ws.ID, Email: "x-" + ws.ID + "@example.com", Name: "Stranger", Role: "owner", CreatedAt: now}
		if err := st.CreateWorkspace(context.Background(), ws, u); err != nil {
			t.Fatal(err)
		}
		stranger := signIn(t, st, u)
		path := "/api/notes/" + id + "/files/" + fileID
		res, raw = e.filesDo(t, filesRaw{method: "GET", path: path, as: &stranger})
		filesProblem(t, "a stranger downloads", res, raw, http.StatusNotFound, "not_found")
		res, raw = e.filesDo(t, filesRaw{method: "DELETE", path: path, as: &stranger, header: ifMatch(v + 1)})
		filesProblem(t, "a stranger deletes", res, raw, http.StatusNotFound, "not_found")
		res, raw = e.filesDo(t, filesRaw{method: "POST", path: "/api/notes/" + id + "/files?name=x.txt", as: &stranger, body: strings.NewReader("theirs"), header: ifMatch(v + 1)})
		filesProblem(t, "a stranger uploads", res, raw, http.StatusNotFound, "not_found")
		// Nor does the stranger's workspace hold the bytes.
		if have, err := st.Blobs().Has(context.Background(), ws.ID, filesHash([]byte("mine"))); err != nil || have {
			t.Fatalf("the stranger's workspace has the blob: %v %v", have, err)
		} else if have, _ := st.Blobs().Has(context.Background(), ws.ID, filesHash([]byte("theirs"))); have {
			t.Fatal("a refused upload stored the stranger's bytes")
		}
		// Hostile file IDs are refused or not found, never a 500.
		for _, fid := range []string{"..%2F..%2Fetc", "file-%00", strings.Repeat("f", 300), "%E2%80%AE"} {
			res, raw := e.filesDo(t, filesRaw{method: "GET", path: "/api/notes/" + id + "/files/" + fid})
			if res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusNotFound {
				t.Errorf("file ID %q: %d %s", fid, res.StatusCode, raw)
			}
		}
	})
}

func TestAttachmentHeader(t *testing.T) {
	for name, want := range map[string]string{
		"a.txt":         `attachment; filename="a.txt"; filename*=UTF-8''a.txt`,
		"naïve file.md": `attachment; filename="na_ve file.md"; filename*=UTF-8''na%C3%AFve%20file.md`,
		`q"\.txt`:       `attachment; filename="q__.txt"; filename*=UTF-8''q%22%5C.txt`,
		"日本.pdf":        `attachment; filename="__.pdf"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.pdf`,
	} {
		if got := api.Attachment(name); got != want {
			t.Errorf("Attachment(%q) = %s, want %s", name, got, want)
		}
	}
}

// BenchmarkFilesUpload: one 25 MiB upload through the REST door on
// SQLite and PostgreSQL, streamed into the blob store (new bytes each time), with the
// guarded metadata write; MB/s is logged as a metric, never asserted.
func BenchmarkFilesUpload(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { filesBenchUpload(b, servertest.Start(b, servertest.Options{})) })
	b.Run("postgres", func(b *testing.B) {
		u, _ := pgtest.Schema(b)
		st, err := postgres.Open(context.Background(), u)
		if err != nil {
			b.Fatal(err)
		}
		filesBenchUpload(b, servertest.Start(b, servertest.Options{Store: st}))
	})
}

func filesBenchUpload(b *testing.B, e *servertest.Env) {
	st := e.Server.Store
	secret, csrf := store.NewID("secret"), store.NewID("csrf")
	now := time.Now().UTC()
	if err := st.CreateSession(context.Background(), store.Session{Hash: auth.HashToken(secret), Workspace: e.Owner.User.Workspace, User: e.Owner.User.ID, CSRF: csrf, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, service.MaxFileBytes)
	owner := service.Person(e.Owner.User.Workspace, e.Owner.User.ID, e.Owner.User.Role)
	var id string
	var v int64
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%(service.MaxNoteFileBytes/service.MaxFileBytes) == 0 { // a Note holds 8 such files
			b.StopTimer()
			res, err := e.Server.Service.CreateNote(context.Background(), owner, service.CreateNoteArgs{Title: fmt.Sprintf("Bench %d", i)})
			if err != nil {
				b.Fatal(err)
			}
			id, v = res.NoteID, res.Version
			b.StartTimer()
		}
		data[0], data[1], data[2] = byte(i), byte(i>>8), byte(i>>16)
		r, _ := http.NewRequest("POST", e.URL+"/api/notes/"+id+"/files?name=bench.bin", bytes.NewReader(data))
		r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: secret})
		r.Header.Set(auth.CSRFHeader, csrf)
		r.Header.Set("If-Match", fmt.Sprintf(`"%d"`, v))
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			b.Fatalf("upload %d: %d", i, res.StatusCode)
		}
		v++
	}
}
