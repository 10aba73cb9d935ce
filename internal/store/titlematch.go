package store

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A title query (ListQuery.Query) matches a title that contains it with
// case ignored rune by rune: title rune t matches query rune q when
// unicode.ToLower(t) == unicode.ToLower(q). Both databases answer exactly
// this, with the same SQL on every path: SQLite by GLOB and PostgreSQL by a
// regular expression, where each query rune becomes the class of every rune
// that lowers as it does ("Ä" → [äÄ]). An index only narrows the rows that
// test reads (SQLite: the FTS5 trigram table resource_titles; PostgreSQL:
// the pg_trgm index resources_title_trgm, when it could be made); it never
// decides a match, so its own idea of case (FTS5's and PostgreSQL's case
// tables are not Go's) cannot change an answer.

// minIndexedRunes is the shortest query an index can narrow: a trigram
// index knows nothing of one or two characters, so those scan.
const minIndexedRunes = 3

// titleMatch is one query, prepared for the databases.
type titleMatch struct {
	classes [][]rune // per query rune: every rune that lowers as it does, sorted
	none    bool     // nothing can match (a NUL: no stored title has one)
}

func newTitleMatch(q string) titleMatch {
	if strings.ContainsRune(q, 0) {
		return titleMatch{none: true}
	}
	m := titleMatch{classes: make([][]rune, 0, utf8.RuneCountInString(q))}
	for _, r := range q {
		m.classes = append(m.classes, caseClass(r))
	}
	return m
}

// glob is the SQLite GLOB pattern of titles that contain the query.
func (m titleMatch) glob() string {
	var b strings.Builder
	b.WriteByte('*')
	for _, c := range m.classes {
		if len(c) == 1 {
			switch c[0] {
			case '*', '?', '[':
				b.WriteByte('[')
				b.WriteRune(c[0])
				b.WriteByte(']')
			default:
				b.WriteRune(c[0])
			}
			continue
		}
		// Only cased letters have more than one member: none of them is
		// special inside a GLOB class (], ^ and -).
		b.WriteByte('[')
		for _, r := range c {
			b.WriteRune(r)
		}
		b.WriteByte(']')
	}
	b.WriteByte('*')
	return b.String()
}

// regex is the PostgreSQL regular expression (ARE, case-sensitive ~) of
// titles that contain the query. Every rune but an ASCII letter or digit is
// written as an escape, so nothing in a query is regex syntax.
func (m titleMatch) regex() string {
	var b strings.Builder
	for _, c := range m.classes {
		b.WriteByte('[')
		for _, r := range c {
			switch {
			case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
				b.WriteRune(r)
			case r <= 0xFFFF:
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				fmt.Fprintf(&b, `\U%08X`, r)
			}
		}
		b.WriteByte(']')
	}
	return b.String()
}

// titleCandidates is how many candidates per row of the limit a title
// query reads from the index before it takes the query for one that many
// titles match (see Base.List).
const titleCandidates = 4

// titleCandidates is the common table expression cand: the IDs of at most
// bound resources of type typ whose titles may match m, as the index says,
// with its arguments; ok is false when no index can tell (the query is too
// short for one). On PostgreSQL the trigram index serves the match itself,
// when the database has one (without it the same query scans); the match
// is planned apart from the bound, or a cached statement's generic plan
// takes the bound for a reason to scan the table until it has that many,
// and its pattern comes in a subquery, as in Base.List. The bound is
// written into the statement, as the limits are there.
func (b *Base) titleCandidates(m titleMatch, typ string, bound int) (cte string, args []any, ok bool) {
	if !m.indexed() {
		return "", nil, false
	}
	if b.D.Name == "postgres" {
		return `cand_all AS MATERIALIZED (SELECT id FROM resources WHERE title ~ (SELECT ?::text)),
			cand AS MATERIALIZED (SELECT id FROM cand_all LIMIT ` + strconv.Itoa(bound) + `)`, []any{m.regex()}, true
	}
	fts := m.fts()
	if fts == "" {
		return "", nil, false
	}
	return `cand AS MATERIALIZED (SELECT k.id FROM resource_titles JOIN resource_title_keys k ON k.rid = resource_titles.rowid
			WHERE resource_titles MATCH ? AND k.type = ? LIMIT ` + strconv.Itoa(bound) + `)`, []any{fts, typ}, true
}

// inIDs is "id is one of the IDs the subquery gives", written so that the
// planner looks each one up by primary key (PostgreSQL's generic plan
// would otherwise merge-join them against every row of the type).
func (d Dialect) inIDs(subquery string) string {
	if d.Name == "postgres" {
		return `id = ANY(ARRAY(` + subquery + `))`
	}
	return `id IN (` + subquery + `)`
}

// indexed reports whether an index can narrow this query.
func (m titleMatch) indexed() bool { return len(m.classes) >= minIndexedRunes }

// Bounds on the FTS5 query of one title query: how many of its trigram
// windows are looked up (each costs a lookup in every segment of the
// index, and the GLOB after it decides anyway), and how many spellings one
// window may have.
const (
	maxFTSWindows   = 3
	maxFTSSpellings = 64
)

// fts is an FTS5 query for resource_titles (trigram, case_sensitive 0)
// that every title the query matches satisfies, or "" when there is none
// worth running: up to maxFTSWindows windows of three runes, spread over
// the query (first and last included, as few as cover it: each one is a
// lookup in every segment of the index), each present in one of its
// spellings. FTS5 folds ASCII case itself; every other rune is looked up
// in each spelling its class allows, since FTS5's folding is not
// unicode.ToLower.
func (m titleMatch) fts() string {
	if !m.indexed() {
		return ""
	}
	spell := make([][]rune, len(m.classes))
	for i, c := range m.classes {
		// The lower-case rune, plus every non-ASCII spelling.
		s := []rune{unicode.ToLower(c[0])}
		for _, r := range c {
			if r >= utf8.RuneSelf && r != s[0] {
				s = append(s, r)
			}
		}
		spell[i] = s
	}
	// As many windows as cover the query without overlap where they can
	// (one per three runes, rounded up), at most maxFTSWindows, spread from
	// the first rune to the last.
	k := min(maxFTSWindows, (len(spell)+2)/3)
	starts := []int{0}
	for i := 1; i < k; i++ {
		starts = append(starts, i*(len(spell)-3)/(k-1))
	}
	var groups []string
	for _, st := range starts {
		a, b, c := spell[st], spell[st+1], spell[st+2]
		if len(a)*len(b)*len(c) > maxFTSSpellings {
			continue
		}
		terms := make([]string, 0, len(a)*len(b)*len(c))
		for _, x := range a {
			for _, y := range b {
				for _, z := range c {
					terms = append(terms, ftsString(string([]rune{x, y, z})))
				}
			}
		}
		if len(terms) == 1 {
			groups = append(groups, terms[0])
		} else {
			groups = append(groups, "("+strings.Join(terms, " OR ")+")")
		}
	}
	return strings.Join(groups, " AND ")
}

// ftsString quotes s as an FTS5 string (a phrase of its trigrams).
func ftsString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// caseClass is every rune whose lower case is r's, r included, sorted.
func caseClass(r rune) []rune {
	l := unicode.ToLower(r)
	class := []rune{r}
	if l != r && unicode.ToLower(l) == l {
		class = append(class, l)
	}
	for _, u := range upperOf()[l] {
		if u != r {
			class = append(class, u)
		}
	}
	if len(class) > 1 {
		sort.Slice(class, func(i, j int) bool { return class[i] < class[j] })
		class = dedupe(class)
	}
	return class
}

func dedupe(s []rune) []rune {
	out := s[:1]
	for _, r := range s[1:] {
		if r != out[len(out)-1] {
			out = append(out, r)
		}
	}
	return out
}

// upperOf maps a rune to every other rune that lowers to it. Only runes in
// unicode.CaseRanges change when lowered, so those are all it visits.
var upperOf = sync.OnceValue(func() map[rune][]rune {
	m := map[rune][]rune{}
	for _, cr := range unicode.CaseRanges {
		for r := rune(cr.Lo); r <= rune(cr.Hi); r++ {
			if l := unicode.ToLower(r); l != r {
				m[l] = append(m[l], r)
			}
		}
	}
	return m
})

// Upkeep of SQLite's title index. Every write of a title adds a small
// segment to the FTS5 index; FTS5's own merging, done as titles are
// written, leaves a segment per level for each unmerged group (about one
// plus the digit sum, in base 4, of the titles written since the index
// was last whole). Every title query looks each of its windows up in
// every segment, and that cost, not the number of titles, is what grows:
// 10,000 titles written one at a time leave about seven segments, and a
// query for one of them costs four times what it does on a whole index.
// So the pruner (Prune) merges the segments into one when there are more
// than maxTitleSegments, by FTS5's incremental merge, titleMergePages
// pages at a time, each step its own short job of the writer.
const (
	maxTitleSegments   = 3
	titleMergePages    = 100
	maxTitleMergeSteps = 2000 // 200,000 pages: about 8,000,000 titles
)

// titleSegments is how many segments SQLite's title index has.
func (b *Base) titleSegments(ctx context.Context) (int, error) {
	var n int
	err := b.R.QueryRowContext(ctx, `SELECT COUNT(DISTINCT segid) FROM resource_titles_idx`).Scan(&n)
	return n, err
}

// compactTitleIndex merges the title index's segments into one when there
// are more than maxTitleSegments (SQLite; PostgreSQL's GIN index needs no
// such care), and answers how many merge steps it ran.
func (b *Base) compactTitleIndex(ctx context.Context) (int, error) {
	if b.D.Name != "sqlite" {
		return 0, nil
	}
	n, err := b.titleSegments(ctx)
	if err != nil || n <= maxTitleSegments {
		return 0, err
	}
	steps := 0
	for steps < maxTitleMergeSteps {
		// A step that found nothing left to merge changes fewer than two
		// rows (FTS5's own test of its merge command).
		var changed int64
		err := b.Tx(ctx, func(q Querier) error {
			var before, after int64
			if err := q.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, `INSERT INTO resource_titles (resource_titles, rank) VALUES ('merge', ?)`, -titleMergePages); err != nil {
				return err
			}
			if err := q.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			changed = after - before
			return nil
		})
		if err != nil {
			return steps, fmt.Errorf("merge the title index: %w", err)
		}
		if changed < 2 {
			break
		}
		steps++
	}
	return steps, nil
}
