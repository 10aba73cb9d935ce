package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"foundry/internal/store"
)

// blobUsage is the workspace's blob usage as the store counts it.
func (e *notesEnv) blobUsage(t *testing.T) store.BlobUsage {
	t.Helper()
	u, err := e.Server.Store.Blobs().Usage(context.Background(), e.Owner.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (e *notesEnv) hasBlob(t *testing.T, data []byte) bool {
	t.Helper()
	ok, err := e.Server.Store.Blobs().Has(context.Background(), e.Owner.Workspace.ID, filesHash(data))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// metric reads one sample of /metrics (a full line's name and labels).
func (e *notesEnv) metric(t *testing.T, series string) float64 {
	t.Helper()
	res, err := http.Get(e.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("/metrics has no %s:\n%s", series, raw)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFilesRefusedUploadCollected: an upload refused for a stale If-Match
// leaves its bytes, unreferenced and counted; the collector removes them
// after the grace period and never a file a version holds, even one
// deleted from the Note since (history keeps it).
func TestFilesRefusedUploadCollected(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		id, v := e.create(t, "Files", true)
		kept := bytes.Repeat([]byte("kept "), 2000)
		deleted := bytes.Repeat([]byte("deleted "), 1000)
		refused := bytes.Repeat([]byte("refused "), 3000)
		res, _, raw := e.filesUpload(t, id, "kept.txt", "text/plain", kept, v, "")
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("upload: %d %s", res.StatusCode, raw)
		}
		res, body, raw := e.filesUpload(t, id, "deleted.txt", "text/plain", deleted, v+1, "")
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("upload: %d %s", res.StatusCode, raw)
		}
		delPath := "/api/notes/" + id + "/files/" + body["file"].(map[string]any)["file_id"].(string)
		if res, raw := e.filesDo(t, filesRaw{method: "DELETE", path: delPath, header: ifMatch(v + 2)}); res.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: %d %s", res.StatusCode, raw)
		}
		// Based on a version long gone: refused, and its bytes are stored.
		res, _, raw = e.filesUpload(t, id, "refused.txt", "text/plain", refused, v, "")
		filesProblem(t, "a stale upload", res, raw, http.StatusPreconditionFailed, "version_conflict")
		if !e.hasBlob(t, refused) {
			t.Fatal("the refused upload's bytes are not there before the collector runs (nothing to test)")
		}
		want := store.BlobUsage{Count: 3, Bytes: int64(len(kept) + len(deleted) + len(refused)), UnreferencedCount: 1, UnreferencedBytes: int64(len(refused))}
		if u := e.blobUsage(t); u != want {
			t.Fatalf("usage %+v, want %+v", u, want)
		}
		if got := e.metric(t, `foundry_blob_bytes{state="unreferenced"}`); got != float64(len(refused)) {
			t.Fatalf("foundry_blob_bytes unreferenced = %v, want %d", got, len(refused))
		}

		// Within the grace period nothing goes.
		if rep, err := e.Server.Blobs.Pass(context.Background(), time.Now().Add(30*time.Minute)); err != nil || rep.Removed != 0 {
			t.Fatalf("pass within the grace period: %+v %v", rep, err)
		}
		rep, err := e.Server.Blobs.Pass(context.Background(), time.Now().Add(2*time.Hour))
		if err != nil || rep.Removed != 1 || rep.RemovedBytes != int64(len(refused)) {
			t.Fatalf("pass after the grace period: %+v %v", rep, err)
		}
		if e.hasBlob(t, refused) || !e.hasBlob(t, kept) || !e.hasBlob(t, deleted) {
			t.Fatalf("after the pass: refused %v kept %v deleted %v", e.hasBlob(t, refused), e.hasBlob(t, kept), e.hasBlob(t, deleted))
		}
		if u := e.blobUsage(t); u.UnreferencedCount != 0 || u.Count != 2 {
			t.Fatalf("usage after the pass: %+v", u)
		}
		var ready struct {
			Detail struct {
				Blobs struct {
					Grace string `json:"grace"`
					Last  *struct {
						Removed      int64  `json:"removed"`
						RemovedBytes int64  `json:"removed_bytes"`
						Error        string `json:"error"`
					} `json:"last"`
				} `json:"blob_collector"`
			} `json:"detail"`
		}
		rr, err := http.Get(e.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(rr.Body).Decode(&ready)
		rr.Body.Close()
		if l := ready.Detail.Blobs.Last; ready.Detail.Blobs.Grace != "1h0m0s" || l == nil || l.Removed != 1 || l.RemovedBytes != int64(len(refused)) || l.Error != "" {
			t.Fatalf("/readyz blob_collector detail: %+v %+v", ready.Detail.Blobs, l)
		}
		if got := e.metric(t, "foundry_blobs_collected_total"); got != 1 {
			t.Fatalf("foundry_blobs_collected_total = %v", got)
		}
		if got := e.metric(t, "foundry_blob_collected_bytes_total"); got != float64(len(refused)) {
			t.Fatalf("foundry_blob_collected_bytes_total = %v", got)
		}
		if got := e.metric(t, `foundry_blob_bytes{state="referenced"}`); got != float64(len(kept)+len(deleted)) {
			t.Fatalf("foundry_blob_bytes referenced = %v", got)
		}
		// The kept file still downloads; the same refused bytes sent again
		// on the current version are a file.
		res, body, raw = e.filesUpload(t, id, "refused.txt", "text/plain", refused, v+3, "")
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("upload again: %d %s", res.StatusCode, raw)
		}
		p := "/api/notes/" + id + "/files/" + body["file"].(map[string]any)["file_id"].(string)
		if res, got := e.filesDo(t, filesRaw{method: "GET", path: p}); res.StatusCode != http.StatusOK || !bytes.Equal(got, refused) {
			t.Fatalf("download of the file sent again: %d, %d bytes", res.StatusCode, len(got))
		}
	})
}

// TestFilesWorkspaceStorageLimit: the workspace's limit counts the bytes
// of refused uploads until they are collected; an upload that would pass
// it is refused with 413 naming the limit, before a byte is stored (and,
// sent without a length, stopped at the limit with nothing stored).
func TestFilesWorkspaceStorageLimit(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		const max = 10000
		e.Server.Service.MaxWorkspaceBytes = max
		id, v := e.create(t, "Quota", true)
		refused := bytes.Repeat([]byte("r"), 6000)
		res, _, raw := e.filesUpload(t, id, "r.bin", "", refused, v+5, "")
		filesProblem(t, "a stale upload", res, raw, http.StatusPreconditionFailed, "version_conflict")

		big := bytes.Repeat([]byte("b"), 5000)
		res, _, raw = e.filesUpload(t, id, "b.bin", "", big, v, "")
		p := filesProblem(t, "an upload over the workspace's limit", res, raw, http.StatusRequestEntityTooLarge, "limit_exceeded")
		if p["limit"] != "workspace_bytes" || p["max"] != float64(max) || p["used"] != float64(6000) || !strings.Contains(p["detail"].(string), "--max-workspace-bytes") {
			t.Fatalf("refusal %s", raw)
		}
		if e.hasBlob(t, big) {
			t.Fatal("the refused upload's bytes were stored")
		}
		// Without a length (chunked), the upload is stopped at the room
		// left, and stores nothing.
		res, raw = e.filesDo(t, filesRaw{method: "POST", path: "/api/notes/" + id + "/files?name=c.bin", body: io.MultiReader(bytes.NewReader(big)), header: ifMatch(v)})
		if p := filesProblem(t, "a chunked upload over the limit", res, raw, http.StatusRequestEntityTooLarge, "limit_exceeded"); p["limit"] != "workspace_bytes" {
			t.Fatalf("chunked refusal %s", raw)
		}
		if e.hasBlob(t, big) || e.blobUsage(t).Bytes != 6000 {
			t.Fatalf("the chunked upload stored bytes: usage %+v", e.blobUsage(t))
		}
		small := bytes.Repeat([]byte("s"), 3000)
		if res, _, raw := e.filesUpload(t, id, "s.bin", "", small, v, ""); res.StatusCode != http.StatusCreated {
			t.Fatalf("an upload within the limit: %d %s", res.StatusCode, raw)
		}
		// Once the refused bytes are collected there is room.
		if rep, err := e.Server.Blobs.Pass(context.Background(), time.Now().Add(2*time.Hour)); err != nil || rep.Removed != 1 {
			t.Fatalf("pass: %+v %v", rep, err)
		}
		if res, _, raw := e.filesUpload(t, id, "b.bin", "", big, v+1, ""); res.StatusCode != http.StatusCreated {
			t.Fatalf("an upload after the collection: %d %s", res.StatusCode, raw)
		}
		if u := e.blobUsage(t); u.Bytes != 8000 || u.UnreferencedBytes != 0 {
			t.Fatalf("usage %+v", u)
		}
		// Full: even an empty file is refused; a limit of 0 is none.
		res, _, raw = e.filesUpload(t, id, "more.bin", "", bytes.Repeat([]byte("m"), 2001), v+2, "")
		filesProblem(t, "one byte over", res, raw, http.StatusRequestEntityTooLarge, "limit_exceeded")
		e.Server.Service.MaxWorkspaceBytes = 0
		if res, _, raw := e.filesUpload(t, id, "more.bin", "", bytes.Repeat([]byte("m"), 2001), v+2, ""); res.StatusCode != http.StatusCreated {
			t.Fatalf("no limit: %d %s", res.StatusCode, raw)
		}
	})
}
