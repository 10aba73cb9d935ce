package api_test

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/service"
)

// TestExportNoteDownloadsAZip: a person downloads a Note as a zip holding
// its note.json and its files' bytes; a token, a missing Note and a bad
// query are refused with a problem, before any byte of a zip.
func TestExportNoteDownloadsAZip(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Plan été", true)
		if res, _, raw := e.filesUpload(t, id, "a.txt", "text/plain", []byte("the bytes"), v, ""); res.StatusCode != http.StatusCreated {
			t.Fatalf("upload: %d %s", res.StatusCode, raw)
		}
		res, raw := e.filesDo(t, filesRaw{method: "GET", path: "/api/notes/" + id + "/export?history=true"})
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/zip" {
			t.Fatalf("export: %d %s %.200s", res.StatusCode, res.Header.Get("Content-Type"), raw)
		}
		dir := service.ExportDirName("Plan été", id)
		if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, "plan-%C3%A9t%C3%A9-"+id+".zip") {
			t.Fatalf("Content-Disposition %q", cd)
		}
		zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, f := range zr.File {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			got[f.Name] = string(b)
		}
		if !strings.Contains(got[dir+"/note.json"], `"format": "foundry-note"`) || got[dir+"/02-files/001-a.txt"] != "the bytes" || got[dir+"/history/000002.json"] == "" {
			t.Fatalf("the zip holds %v", keys(got))
		}
		// The archive imports back into a new Note.
		imp, err := e.Server.Service.ImportArchive(t.Context(), service.Person(e.Owner.Workspace.ID, e.Owner.User.ID, service.RoleOwner), service.NewZipArchive(zr), service.ImportOptions{})
		if err != nil || len(imp.Notes) != 1 || len(imp.Problems) != 0 || imp.Notes[0].Title != "Plan été" {
			t.Fatalf("import of the download: %+v %v", imp, err)
		}

		tok := e.Token(t, nil, auth.ScopeRead, auth.ScopeWrite)
		res, raw = e.filesDo(t, filesRaw{method: "GET", path: "/api/notes/" + id + "/export", bearer: tok})
		filesProblem(t, "export by token", res, raw, http.StatusForbidden, service.PersonOnly)
		res, raw = e.filesDo(t, filesRaw{method: "GET", path: "/api/notes/note_nosuchnote/export"})
		filesProblem(t, "export of a missing Note", res, raw, http.StatusNotFound, "not_found")
		res, raw = e.filesDo(t, filesRaw{method: "GET", path: "/api/notes/" + id + "/export?history=maybe"})
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Content-Disposition") != "" {
			t.Fatalf("history=maybe: %d %v %s", res.StatusCode, res.Header, raw)
		}
	})
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
