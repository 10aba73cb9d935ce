package main

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// minBlobGrace is the shortest --blob-grace: an upload's write must be
// able to commit within it after its bytes are stored.
const minBlobGrace = time.Minute

// parseBlobFlags reads --blob-grace and --max-workspace-bytes.
func parseBlobFlags(grace time.Duration, maxBytes string) (time.Duration, int64, error) {
	if grace < minBlobGrace {
		return 0, 0, usagef("--blob-grace: %v is too short: an upload's bytes must outlive the write that adds the file to its Note; give %v or more (default 1h)", grace, minBlobGrace)
	}
	n, err := parseSize(maxBytes)
	if err != nil {
		return 0, 0, usagef("--max-workspace-bytes: %q is not a size: give one like 10GiB, 500MiB or 1048576B, or 0 for no limit", maxBytes)
	}
	return grace, n, nil
}

// parseSize reads a byte size: 0, or a whole number of GiB, MiB, KiB or B
// that fits in 63 bits.
func parseSize(s string) (int64, error) {
	if s == "0" {
		return 0, nil
	}
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || num == "" || num[0] < '0' || num[0] > '9' || n <= 0 || n > math.MaxInt64/u.mult {
			return 0, strconv.ErrSyntax
		}
		return n * u.mult, nil
	}
	return 0, strconv.ErrSyntax
}
