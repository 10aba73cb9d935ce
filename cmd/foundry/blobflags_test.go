package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseBlobFlags(t *testing.T) {
	for _, c := range []struct {
		grace time.Duration
		size  string
		want  int64
	}{
		{time.Hour, "10GiB", 10 << 30},
		{time.Minute, "500MiB", 500 << 20},
		{24 * time.Hour, "1048576B", 1 << 20},
		{time.Hour, "0", 0},
	} {
		g, n, err := parseBlobFlags(c.grace, c.size)
		if err != nil || g != c.grace || n != c.want {
			t.Errorf("%v %q: %v %d %v", c.grace, c.size, g, n, err)
		}
	}
	for _, c := range []struct {
		grace time.Duration
		size  string
		flag  string
	}{
		{59 * time.Second, "10GiB", "--blob-grace"},
		{0, "10GiB", "--blob-grace"},
		{-time.Hour, "10GiB", "--blob-grace"},
		{time.Hour, "", "--max-workspace-bytes"},
		{time.Hour, "-1GiB", "--max-workspace-bytes"},
		{time.Hour, "10GB", "--max-workspace-bytes"},
		{time.Hour, "1.5GiB", "--max-workspace-bytes"},
		{time.Hour, " 10GiB", "--max-workspace-bytes"},
		{time.Hour, "+10GiB", "--max-workspace-bytes"},
		{time.Hour, "99999999999999GiB", "--max-workspace-bytes"},
		{time.Hour, "10", "--max-workspace-bytes"},
		{time.Hour, "0B", "--max-workspace-bytes"},
	} {
		_, _, err := parseBlobFlags(c.grace, c.size)
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v %q: %v; want a usage error naming %s", c.grace, c.size, err, c.flag)
		}
	}
}

// TestServeRefusesBadBlobFlags: serve exits 2 naming the flag, before the
// data folder is touched.
func TestServeRefusesBadBlobFlags(t *testing.T) {
	bin := foundryBin(t)
	for _, c := range [][]string{{"--blob-grace", "1s"}, {"--blob-grace", "soon"}, {"--max-workspace-bytes", "lots"}} {
		data := filepath.Join(t.TempDir(), "data")
		code, stderr, served := serveOrRefuse(t, bin, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, c...)...)
		if served || code != 2 || !strings.Contains(stderr, c[0][1:]) { // the flag package says -blob-grace
			t.Errorf("serve %q: exit %d, served %v: %s", c, code, served, stderr)
		}
		if _, err := os.Stat(data); err == nil {
			t.Errorf("serve %q created the data folder before refusing", c)
		}
	}
}
