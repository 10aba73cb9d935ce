package docgen

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"foundry/internal/api"
	"foundry/internal/mcpserver"
	"foundry/internal/note"
	"foundry/internal/room"
	"foundry/internal/search"
	"foundry/internal/server"
	"foundry/internal/service"
	"foundry/internal/urlnorm"
)

// limit is one row of the limits table: what is bounded, the bound (its
// numbers taken from the constants named in consts), and the field a
// refusal names.
type limit struct {
	what, bound, field string
	consts             []string
}

// limits are the rows, in the order a reader meets them: a Note and its
// tabs, then Rooms, files, and what bounds every call.
func limits() []limit {
	chars := func(runes, bytes int) string {
		return fmt.Sprintf("%s characters (≤ %s bytes), no control/bidi characters", count(runes), count(bytes))
	}
	return []limit{
		{"Note title", chars(note.MaxTitleRunes, note.MaxTitleBytes), "`title`",
			[]string{"note.MaxTitleRunes", "note.MaxTitleBytes"}},
		{"title filter of a list of Notes", count(service.MaxQueryRunes) + " characters, no control characters", "`query`",
			[]string{"service.MaxQueryRunes"}},
		{"search (`search_notes`, `GET /api/search`)", fmt.Sprintf("query 1–%d characters, at most %d words and phrases, a prefix* of %d or more characters; %d hits a page by default (limit as a list page); snippets ≤ %d characters; the first %s words of a unit (a chunk of text, a slide, a block of cells) are indexed, each cut to %d characters",
			search.MaxQueryRunes, search.MaxTerms, search.MinPrefixRunes, service.DefaultSearchPage, search.MaxSnippetRunes, count(search.MaxUnitWords), search.MaxWordRunes), "`query`, `tab_type`",
			[]string{"search.MaxQueryRunes", "search.MaxTerms", "search.MinPrefixRunes", "service.DefaultSearchPage", "search.MaxSnippetRunes", "search.MaxUnitWords", "search.MaxWordRunes"}},
		{"deleted Note in the trash", fmt.Sprintf("kept %d days, then removed for good with its history (restorable until then; at most %d purged a pass)", service.TrashDays, service.PurgeLimit), "`note_id`",
			[]string{"service.TrashDays", "service.PurgeLimit"}},
		{"tab label", chars(note.MaxLabelRunes, note.MaxLabelBytes), "`label`",
			[]string{"note.MaxLabelRunes", "note.MaxLabelBytes"}},
		{"tabs per Note", count(note.MaxTabsPerNote) + ", the three fixed tabs included (so `list_note_tabs` is bounded)", "`note_id`",
			[]string{"note.MaxTabsPerNote"}},
		{"whole Note", size(note.MaxNoteBytes) + " as stored; an edit that grows a Note past it is refused, one that shrinks it is not",
			"the edit's field: `text`, `body`, `slides`, `values`, `data`, `url`, `edits`", []string{"note.MaxNoteBytes"}},
		{"markdown tab text", size(note.MaxMarkdownBytes) + " UTF-8, also as `edit_note_text` leaves it", "`text`, `edits`",
			[]string{"note.MaxMarkdownBytes"}},
		{"`edit_note_text` edits", "1–" + count(note.MaxTextEdits) + " per call, applied in order; each `old_text` non-empty and found exactly once in the text as the edits before it left it (`old_text_not_found`, with the nearest place; `old_text_not_unique`, with up to 3 places; excerpts ≤ 60 characters each side)",
			"`edits`, `edits[i].old_text`", []string{"note.MaxTextEdits"}},
		{"`old_text`, `new_text`", size(note.MaxEditTextBytes) + " UTF-8 each, so " + count(note.MaxTextEdits) + " edits fit the request body even with every character escaped",
			"`edits[i].old_text`, `edits[i].new_text`", []string{"note.MaxEditTextBytes"}},
		{"slide title", count(note.MaxSlideTitleRunes) + " characters", "`title`, `slides[i].title`",
			[]string{"note.MaxSlideTitleRunes"}},
		{"slide body, notes", count(note.MaxSlideTextRunes) + " characters and " + size(note.MaxSlideTextBytes) + " each", "`body`, `notes`, `slides[i].body`",
			[]string{"note.MaxSlideTextRunes", "note.MaxSlideTextBytes"}},
		{"slides per tab", count(note.MaxSlidesPerTab), "`slides`", []string{"note.MaxSlidesPerTab"}},
		{"outline in one call", "1–" + count(note.MaxOutlineSlides) + " slides", "`slides`", []string{"note.MaxOutlineSlides"}},
		{"string cell", size(note.MaxCellBytes), "`values[r][c]`, `data.sheets[i].cells[r][c]`", []string{"note.MaxCellBytes"}},
		{"cells per sheet tab", count(note.MaxSheetCells) + " (bounding rectangle of every sheet)", "`values`, `data.sheets`",
			[]string{"note.MaxSheetCells"}},
		{"sheets per tab", "1–" + count(note.MaxSheetsPerTab), "`data.sheets`", []string{"note.MaxSheetsPerTab"}},
		{"recalculation per write", count(note.MaxRecalcCells) + " formulas recomputed by one write (more: refused, the limit named)", "`values`, `data.sheets`", []string{"note.MaxRecalcCells"}},
		{"sheet layout", fmt.Sprintf("column widths %d–%d px, at most %d columns per change; %d number formats per sheet", note.MinColWidth, note.MaxColWidth, note.MaxWidthsPerSet, note.MaxSheetFormats),
			"`widths`, `format`", []string{"note.MinColWidth", "note.MaxColWidth", "note.MaxWidthsPerSet", "note.MaxSheetFormats"}},
		{"spreadsheet import", size(service.MaxImportBytes) + " an .xlsx or .csv file; the sheet tab limits above", "`body`", []string{"service.MaxImportBytes"}},
		{"sheet name", chars(note.MaxSheetNameRunes, note.MaxSheetNameBytes), "`data.sheets[i].name`",
			[]string{"note.MaxSheetNameRunes", "note.MaxSheetNameBytes"}},
		{"range read or write", count(note.MaxRangeRows) + " × " + count(note.MaxRangeCols) + " cells per call", "`rows`, `cols`, `values`",
			[]string{"note.MaxRangeRows", "note.MaxRangeCols"}},
		{"source title", chars(note.MaxSourceTitleRunes, note.MaxSourceTitleBytes), "`title`",
			[]string{"note.MaxSourceTitleRunes", "note.MaxSourceTitleBytes"}},
		{"source URL", count(urlnorm.MaxLen) + " characters and " + count(urlnorm.MaxBytes) + " bytes; http(s) only; no user name or password; no control/bidi characters", "`url`",
			[]string{"urlnorm.MaxLen", "urlnorm.MaxBytes"}},
		{"list page", fmt.Sprintf("%d–%d (default %d over MCP, %d over REST); position cursors ≤ %s", service.MinPage, service.MaxPage, service.DefaultPage, api.DefaultPage, count(service.MaxCursorOffset)),
			"`limit`, `cursor`", []string{"service.MinPage", "service.MaxPage", "service.DefaultPage", "api.DefaultPage", "service.MaxCursorOffset"}},
		{"app name", count(room.MaxNameRunes) + " characters, no control/bidi characters", "`name`", []string{"room.MaxNameRunes"}},
		{"snippet app", fmt.Sprintf("1–%d files, %s a file, %s in all (larger: push a repository)", room.MaxFiles, size(room.MaxFileBytes), size(room.MaxTotalBytes)),
			"`files`, `files[\"path\"]`", []string{"room.MaxFiles", "room.MaxFileBytes", "room.MaxTotalBytes"}},
		{"repository version", fmt.Sprintf("1–%s files, %s a file, %s in all", count(room.MaxRepoFiles), size(room.MaxRepoFileBytes), size(room.MaxRepoTotalBytes)),
			"`files`, `files[\"path\"]`", []string{"room.MaxRepoFiles", "room.MaxRepoFileBytes", "room.MaxRepoTotalBytes"}},
		{"snippet / repository path", "≤ " + count(room.MaxPathBytes) + " bytes, NFKC-stable, no `..`, no trailing dot or space, no `<>:\"|?*` or `\\`, no Windows device names, no two paths that differ only in case",
			"`files`", []string{"room.MaxPathBytes"}},
		{"a live editor's push (POST …/text)", fmt.Sprintf("1–%d change sets; `client_id` 1–%d characters of A–Z, a–z, 0–9, - and _; the newest %d updates of a text are kept, an editor further behind reloads it", service.MaxPushUpdates, service.MaxClientIDBytes, service.TextLogKeep),
			"`updates`, `client_id`", []string{"service.MaxPushUpdates", "service.MaxClientIDBytes", "service.TextLogKeep"}},
		{"a snippet's build, as an agent is told it", fmt.Sprintf("the first %d errors (`build.error_count`: how many), each source line cut to %d bytes", service.MaxBuildErrors, service.MaxBuildLineBytes), "—",
			[]string{"service.MaxBuildErrors", "service.MaxBuildLineBytes"}},
		{"a proposal's review", "the text of " + size(service.MaxReviewBytes) + " of files; files past it are listed with their size and no text", "—",
			[]string{"service.MaxReviewBytes"}},
		{"file (Files tab)", fmt.Sprintf("%s a file; %d files and %s a Note (HTTP 413 with `limit`: `file_bytes`, `files_per_note`, `bytes_per_note`)", size(service.MaxFileBytes), service.MaxFilesPerNote, size(service.MaxNoteFileBytes)),
			"`body`", []string{"service.MaxFileBytes", "service.MaxFilesPerNote", "service.MaxNoteFileBytes"}},
		{"files of a workspace", fmt.Sprintf("%s by default (`serve --max-workspace-bytes`; 0: none), every stored file counted, uploads no Note holds yet included (HTTP 413 with `limit`: `workspace_bytes`, `max`, `used`)", size(service.DefaultMaxWorkspaceBytes)),
			"`body`", []string{"service.DefaultMaxWorkspaceBytes"}},
		{"file name", fmt.Sprintf("%d characters (≤ %s bytes), trimmed; no control/bidi characters, no `/` or `\\`, not `.` or `..`; Content-Type ≤ %d bytes", service.MaxFileNameRunes, count(service.MaxFileNameBytes), service.MaxContentTypeLen),
			"`name`, `Content-Type`", []string{"service.MaxFileNameRunes", "service.MaxFileNameBytes", "service.MaxContentTypeLen"}},
		{"import archive (`foundry import`)", fmt.Sprintf("%s entries; note.json %s; a tab's entry %s; everything read %s; each file as the Files tab's limits; a Note with an entry past a limit is not created", count(service.MaxArchiveEntries), size(service.MaxManifestBytes), size(service.MaxTabEntryBytes), size(service.MaxImportNotesBytes)),
			"the entry's name", []string{"service.MaxArchiveEntries", "service.MaxManifestBytes", "service.MaxTabEntryBytes", "service.MaxImportNotesBytes"}},
		{"personal access token name", fmt.Sprintf("≤ %d bytes, trimmed, one line; empty: \"Personal token N\"", service.MaxTokenNameBytes), "`name`",
			[]string{"service.MaxTokenNameBytes"}},
		{"workspace name", fmt.Sprintf("1–%d bytes, trimmed, one line", service.MaxWorkspaceNameBytes), "`name`",
			[]string{"service.MaxWorkspaceNameBytes"}},
		{"IDs, cursors, idempotency keys", fmt.Sprintf("no control, bidi or invisible characters; keys %d–%d characters; an ID ≤ %d bytes", service.MinKey, service.MaxKey, service.MaxIDBytes),
			"the argument", []string{"service.MinKey", "service.MaxKey", "service.MaxIDBytes"}},
		{"a REST conflict's `changes`", fmt.Sprintf("the newest %d versions since the one the write was based on", service.MaxConflictChanges), "—",
			[]string{"service.MaxConflictChanges"}},
		{"a version's diff (`GET …/versions/{version}/diff`)", fmt.Sprintf("%d changes listed (lines, cells, sheets, slides, items), the rest counted in `omitted`; a line or field shown ≤ %d characters", note.MaxDiffEntries, note.MaxDiffText), "—",
			[]string{"note.MaxDiffEntries", "note.MaxDiffText"}},
		{"long poll", fmt.Sprintf("`wait_seconds` 0–%d; at most %d waiting per token and %d per node by default (`serve --max-waiters-per-token`, `--max-waiters-per-node`)", int(service.MaxWait.Seconds()), service.DefaultWaitersPerToken, service.DefaultWaitersPerNode),
			"`wait_seconds`", []string{"service.MaxWait", "service.DefaultWaitersPerToken", "service.DefaultWaitersPerNode"}},
		{"topics of a live stream (`GET /api/live`)", fmt.Sprintf("1–%d: `note:<note_id>` or `proposals`; each stream counts as a long poll against the caps above", service.MaxTopics),
			"`topic`", []string{"service.MaxTopics"}},
		{"MCP request body", size(mcpserver.MaxBody), "`body` (HTTP 413)", []string{"mcpserver.MaxBody"}},
		{"REST request body", fmt.Sprintf("%s for most calls; a markdown save %s, a slide %s, a cells write %s, an upload the file limit plus one byte",
			size(api.MaxBody), size(api.MaxTextBody), size(api.MaxSlideBody), size(api.MaxCellsBody)),
			"`body` (HTTP 413)", []string{"api.MaxBody", "api.MaxTextBody", "api.MaxSlideBody", "api.MaxCellsBody", "api.MaxUploadBody"}},
	}
}

// LimitsTable renders the limits.
func LimitsTable() (string, error) {
	var b strings.Builder
	b.WriteString("| What | Limit | Field in the refusal | In the code |\n|---|---|---|---|\n")
	for _, l := range limits() {
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` |\n", l.what, cell(l.bound), l.field, strings.Join(l.consts, "`, `"))
	}
	return b.String(), nil
}

// count writes n with thousands separators from five digits on: 2048,
// 20,000, 1,000,000.
func count[T ~int | ~int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	if len(s) < 5 {
		return s
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// size writes a byte count that is a whole number of its largest binary
// unit in that unit, with the exact bytes: "64 KiB (65,536 bytes)"; any
// other count (6 MiB and 4 KiB) as bytes alone.
func size[T ~int | ~int64](n T) string {
	for _, u := range []struct {
		name  string
		bytes int64
	}{{"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(n) < u.bytes {
			continue
		}
		if int64(n)%u.bytes == 0 {
			return fmt.Sprintf("%d %s (%s bytes)", int64(n)/u.bytes, u.name, count(n))
		}
		break
	}
	return count(n) + " bytes"
}

// ConnectionsTable renders the bounds of every HTTP connection, from the
// server's timeouts.
func ConnectionsTable() (string, error) {
	rows := []struct{ what, bound, constant string }{
		{"sending the request headers", seconds(server.ReadHeaderTimeout), "server.ReadHeaderTimeout"},
		{"sending headers and body", seconds(server.ReadTimeout), "server.ReadTimeout"},
		{"writing an answer (a " + seconds(service.MaxWait) + " long poll plus margin)", seconds(server.WriteTimeout), "server.WriteTimeout"},
		{"idle between requests", seconds(server.IdleTimeout), "server.IdleTimeout"},
		{"request headers", size(server.MaxHeaderBytes), "server.MaxHeaderBytes"},
		{"a graceful shutdown on SIGTERM, the drain delay included (`serve --shutdown-timeout`)", seconds(server.DefaultShutdownTimeout), "server.DefaultShutdownTimeout"},
		{"serving on once `/readyz` answers draining (`serve --drain-delay`)", seconds(server.DefaultDrainDelay), "server.DefaultDrainDelay"},
	}
	var b strings.Builder
	b.WriteString("| What | Bound | In the code |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | `%s` |\n", r.what, r.bound, r.constant)
	}
	return b.String(), nil
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}
