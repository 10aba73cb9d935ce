package service

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"

	"foundry/internal/note"
	"foundry/internal/problem"
	"foundry/internal/store"
)

// A workspace's storage: every byte its blobs hold counts, those of uploads
// no version references yet included (a refused upload keeps its bytes
// until the collector removes them after its grace period), so no one can
// fill the disk by uploads that are refused. The limit is
// Service.MaxWorkspaceBytes (serve --max-workspace-bytes); an upload that
// would pass it is refused before a byte is stored when its length is
// known, and stopped at the limit when it is not. Uploads running at once
// on one node share the room left (reserveStorage); on several nodes each
// checks what the others have stored.

// DefaultMaxWorkspaceBytes is serve's default storage limit per workspace.
const DefaultMaxWorkspaceBytes = 10 << 30

// FileBytesGone is the code of an upload whose bytes were removed before
// its write committed (see store.ErrBlobMissing).
const FileBytesGone = "file_bytes_gone"

func blobGone() *problem.Problem {
	return problem.New(FileBytesGone, "body", "the file's bytes were removed as unreferenced before the upload's write committed; send the file again")
}

// uploading counts the bytes uploads on this node may still store, per
// workspace, until their Put has counted them in the blob index: uploads
// running at once share the room left instead of each seeing all of it.
type uploading struct {
	mu       sync.Mutex
	reserved map[string]int64
}

// reserveStorage is how many bytes an upload of length bytes (-1: not
// known) to ws may store (math.MaxInt64 without a limit), reserved until
// release is called (after its Put), or the refusal of one that would
// pass the limit. most is the most the upload may store by its other
// limits.
func (s *Service) reserveStorage(ctx context.Context, ws string, length, most int64) (room int64, release func(), err error) {
	if s.MaxWorkspaceBytes <= 0 {
		return math.MaxInt64, func() {}, nil
	}
	up := &s.uploads
	up.mu.Lock()
	defer up.mu.Unlock()
	// Read under the lock: an upload that released its reservation has
	// its bytes in the index by then.
	u, err := s.Store.Blobs().Usage(ctx, ws)
	if err != nil {
		return 0, nil, err
	}
	used := u.Bytes + up.reserved[ws]
	room = max(s.MaxWorkspaceBytes-used, 0)
	if length > room || room == 0 {
		return 0, nil, s.storageFullOf(used, u.UnreferencedBytes, max(length, 1))
	}
	take := min(room, most)
	if length >= 0 {
		take = min(take, length)
	}
	if up.reserved == nil {
		up.reserved = map[string]int64{}
	}
	up.reserved[ws] += take
	var once sync.Once
	return room, func() {
		once.Do(func() {
			up.mu.Lock()
			defer up.mu.Unlock()
			if up.reserved[ws] -= take; up.reserved[ws] <= 0 {
				delete(up.reserved, ws)
			}
		})
	}, nil
}

// storeBytes stores r's bytes as a blob of ws: at most most bytes (over
// it: *store.BlobTooLargeError with Limit most), and within the
// workspace's storage limit (over it: its refusal, before a byte is
// stored when length is known). It is how a file's bytes enter the blob
// store, whichever act brings them.
func (s *Service) storeBytes(ctx context.Context, ws string, r io.Reader, length, most int64) (string, int64, error) {
	room, release, err := s.reserveStorage(ctx, ws, length, most)
	if err != nil {
		return "", 0, err
	}
	sha, size, err := s.Store.Blobs().Put(ctx, ws, r, min(most, room))
	release()
	var tl *store.BlobTooLargeError
	if errors.As(err, &tl) && room < most {
		return "", 0, s.storageFull(ctx, ws, room+1)
	}
	return sha, size, err
}

// storageFull is the refusal of a file of at least size bytes that would
// pass ws's storage limit.
func (s *Service) storageFull(ctx context.Context, ws string, size int64) error {
	u, err := s.Store.Blobs().Usage(ctx, ws)
	if err != nil {
		return err
	}
	return s.storageFullOf(u.Bytes, u.UnreferencedBytes, size)
}

func (s *Service) storageFullOf(used, unreferenced, size int64) *problem.Problem {
	return problem.New(problem.Limit, "body", "the workspace's files hold %d bytes (%d of them uploads no Note holds, removed within the grace period); a file of %d bytes would pass the workspace storage limit of %d bytes. Ask the server's operator to raise --max-workspace-bytes; deleting a file from a Note frees nothing, as its history keeps it",
		used, unreferenced, size, s.MaxWorkspaceBytes).
		With("limit", "workspace_bytes").With("max", s.MaxWorkspaceBytes).With("used", used)
}

// fileHashes are the hashes of d's files.
func fileHashes(d *note.Doc) map[string]bool {
	m := make(map[string]bool, len(d.Files))
	for _, f := range d.Files {
		m[f.SHA256] = true
	}
	return m
}

// addedHashes are the hashes of d's files that before does not hold: what
// a write of a Note names anew (store.Change.NamedBlobs), whichever act it
// is (an upload, a restore, an import).
func addedHashes(before map[string]bool, d *note.Doc) []string {
	var out []string
	for _, f := range d.Files {
		if !before[f.SHA256] {
			before[f.SHA256] = true
			out = append(out, f.SHA256)
		}
	}
	return out
}
