package room

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"foundry/internal/problem"
)

// Repository limits: a pinned version is proposed by reference, so it may be
// far larger than a snippet.
const (
	MaxRepoFiles      = 2000
	MaxRepoFileBytes  = 8 << 20
	MaxRepoTotalBytes = 64 << 20
)

// Repository is the metadata of a repository: its pinned versions, oldest
// first. Content lives in the store.
type Repository struct {
	ID        string    `json:"repository_id"`
	Name      string    `json:"name"`
	Versions  []Version `json:"versions"`
	CreatedAt string    `json:"created_at"`
}

// Version is one immutable, pinned version of a repository.
type Version struct {
	ID       string `json:"version_id"`
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"` // TreeHash of the files
	PushedAt string `json:"pushed_at"`
	PushedBy string `json:"pushed_by"`
}

// CheckRepoFiles applies the rules of a repository push: 1..MaxRepoFiles
// files, every path safe (CheckPath), each file at most MaxRepoFileBytes and
// all of them at most MaxRepoTotalBytes. Paths are visited in sorted order.
func CheckRepoFiles(files map[string][]byte) error {
	if len(files) == 0 {
		return problem.New(problem.Invalid, "files", "no files: a repository version needs at least one file")
	}
	if len(files) > MaxRepoFiles {
		return problem.New(problem.Limit, "files",
			"%d files; a repository version may have at most %d files", len(files), MaxRepoFiles)
	}
	paths := sortedKeys(files)
	for _, p := range paths {
		if err := CheckPath(p); err != nil {
			return err
		}
	}
	if err := CheckPathSet(paths); err != nil {
		return err
	}
	var total int64
	for _, p := range paths {
		n := len(files[p])
		if n > MaxRepoFileBytes {
			return problem.New(problem.Limit, "files["+strconv.Quote(p)+"]",
				"file is %d bytes; a repository file may be at most 8 MiB (%d bytes)", n, MaxRepoFileBytes)
		}
		total += int64(n)
	}
	if total > MaxRepoTotalBytes {
		return problem.New(problem.Limit, "files",
			"files total %d bytes; a repository version may be at most 64 MiB (%d bytes) in all", total, MaxRepoTotalBytes)
	}
	return nil
}

// TreeHash is the SHA-256 (64 hex characters) of a set of files: path, then
// content, for each path in sorted order, each part preceded by its length as
// an 8-byte big-endian integer. Equal trees hash equal, whatever the map order.
func TreeHash(files map[string][]byte) string {
	h := sha256.New()
	for _, p := range sortedKeys(files) {
		writePart(h, p)
		writePart(h, files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// NewVersion checks files (CheckRepoFiles) and returns the metadata of a new
// pinned version with the given ID.
func NewVersion(id string, files map[string][]byte, by string, now time.Time) (Version, error) {
	if err := CheckRepoFiles(files); err != nil {
		return Version{}, err
	}
	var total int64
	for _, b := range files {
		total += int64(len(b))
	}
	return Version{
		ID:       id,
		Files:    len(files),
		Bytes:    total,
		SHA256:   TreeHash(files),
		PushedAt: stamp(now),
		PushedBy: by,
	}, nil
}

// FindVersion returns the pinned version versionID of r, or NotFound naming
// the next step.
func FindVersion(r *Repository, versionID string) (Version, error) {
	for _, v := range r.Versions {
		if v.ID == versionID {
			return v, nil
		}
	}
	return Version{}, problem.New(problem.NotFound, "version_id",
		"repository '%s' has no pinned version '%s'; list the repositories to see their pinned versions", r.ID, versionID)
}
