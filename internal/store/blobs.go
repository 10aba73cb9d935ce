package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"
)

// Blobs is the content-addressed store of file bytes (a Note's files tab
// holds only their metadata). A blob is named by the hex SHA-256 of its
// bytes and belongs to one workspace: the same hash asked for in another
// workspace is not found, and the same bytes put twice in one workspace are
// stored once.
//
// A blob some version has named is never deleted: deleting a file from a
// Note removes its metadata in a new version, and restoring an older
// version brings the metadata back, so the bytes must still be there for as
// long as history can name them (which is for as long as the Note's history
// is kept). A blob no version names (an upload whose write was refused) is
// removed by Collect once it has not been put for a grace period (see
// blobindex.go).
//
// On SQLite a blob is a file in the data folder, blobs/<workspace>/<ab>/<rest
// of the hash>, written to a temporary file in the same folder, synced, then
// renamed: a blob is whole or absent. On PostgreSQL it is the rows of
// blob_chunks (bytea, BlobChunk bytes each) and one row of blobs, written in
// one transaction.
type Blobs interface {
	// Put reads r to its end and stores what it read, at most limit bytes:
	// one more is *BlobTooLargeError and nothing is stored. It answers the
	// hex SHA-256 and the size of the bytes.
	Put(ctx context.Context, ws string, r io.Reader, limit int64) (sha string, size int64, err error)
	// Open reads a blob of ws (ErrNotFound when ws has none by that hash).
	Open(ctx context.Context, ws, sha string) (Blob, error)
	// Has reports whether ws has the blob.
	Has(ctx context.Context, ws, sha string) (bool, error)
	// Usage is what ws's blobs hold, those no version references yet
	// included: what a workspace's storage limit is checked against.
	Usage(ctx context.Context, ws string) (BlobUsage, error)
	// Totals is Usage of every workspace together (for metrics).
	Totals(ctx context.Context) (BlobUsage, error)
	// Collect removes blobs no version references that were last put
	// before now minus the grace period (see BlobCollect), at most Batch
	// of them per call.
	Collect(ctx context.Context, now time.Time, c BlobCollect) (BlobReport, error)
}

// Blob is one stored blob being read; Size is its length in bytes.
type Blob interface {
	io.ReadSeekCloser
	Size() int64
}

// BlobChunk is the size of one PostgreSQL row of a blob's bytes.
const BlobChunk = 1 << 20

// BlobTooLargeError: a Put read more than its limit.
type BlobTooLargeError struct{ Limit int64 }

func (e *BlobTooLargeError) Error() string {
	return fmt.Sprintf("the file is over %d bytes, the most one file may hold", e.Limit)
}

var (
	shaPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
	wsPattern  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// CheckBlobName refuses a workspace ID or hash that is not one (both become
// part of a file path on SQLite): ErrNotFound, as no such blob can exist.
func CheckBlobName(ws, sha string) error {
	if !wsPattern.MatchString(ws) || !shaPattern.MatchString(sha) {
		return ErrNotFound
	}
	return nil
}

// CheckBlobWorkspace refuses a workspace ID that cannot name a folder.
func CheckBlobWorkspace(ws string) error {
	if !wsPattern.MatchString(ws) {
		return errors.New("blobs: the workspace ID is not a plain ID")
	}
	return nil
}
