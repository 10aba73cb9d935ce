package server_test

import (
	"os"
	"testing"

	"foundry/internal/browsertest"
	"foundry/internal/note"
)

// TestMain ends the Chromium the browser tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	browsertest.Close()
	os.Exit(code)
}

func appendMarkdown(line string) func(d *note.Doc) ([]string, error) {
	return func(d *note.Doc) ([]string, error) {
		d.Markdown += line + "\n"
		return []string{note.TypeMarkdown}, nil
	}
}
