package server_test

import "foundry/internal/note"

func appendMarkdown(line string) func(d *note.Doc) ([]string, error) {
	return func(d *note.Doc) ([]string, error) {
		d.Markdown += line + "\n"
		return []string{note.TypeMarkdown}, nil
	}
}
