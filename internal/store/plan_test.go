package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// planNotes is how many Notes the plan tests list: enough that a plan
// reading all of them would show.
const planNotes = 3000

// planFixture fills a fresh workspace of b's store with planNotes Notes:
// "Weekly planning 00000" on, one of them (i = 5) also "Quokka"; one in 100
// marked deleted.
func planFixture(t *testing.T, s store.Store, b *store.Base) string {
	t.Helper()
	ws := storetest.Seed(t, s)
	notes := make([]storetest.BulkNote, planNotes)
	for i := range notes {
		notes[i] = storetest.BulkNote{Title: fmt.Sprintf("Weekly planning %05d", i), Approved: true}
		if i == 5 {
			notes[i].Title += " Quokka"
		}
		if i%100 == 7 {
			notes[i].Mark = "gone"
		}
	}
	storetest.BulkNotes(t, b, ws, notes)
	if _, err := s.Prune(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	return ws
}

// planQueries are the lists whose plans are checked: a title query one
// title matches, one every title matches (the dense branch), and a plain
// page, as a person's list asks for them.
func planQueries(ws string) map[string]store.ListQuery {
	q := func(query string) store.ListQuery {
		return store.ListQuery{Workspace: ws, Type: store.TypeNote, Query: query, Unmarked: "gone", Limit: 21}
	}
	return map[string]store.ListQuery{"rare": q("quokka"), "dense": q("planning"), "page": q("")}
}

// TestListPlansSQLite: on SQLite a title query's candidates come from the
// FTS5 index and its rows are looked up by ID; where rows are read in ID
// order (the dense branch, a plain page) they are read from the index on
// (workspace, type, id), never sorted, so the LIMIT stops the read.
func TestListPlansSQLite(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := planFixture(t, s, &s.Base)
	for name, q := range planQueries(ws) {
		query, args := s.Base.ListStatement(q)
		rows, err := s.Base.R.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		parent, detail := map[int]int{}, map[int]string{}
		var order []int
		for rows.Next() {
			var id, p, unused int
			var d string
			if err := rows.Scan(&id, &p, &unused, &d); err != nil {
				t.Fatal(err)
			}
			parent[id], detail[id] = p, d
			order = append(order, id)
		}
		rows.Close()
		// under is the name of the common table expression a step serves.
		under := func(id int) string {
			for ; id != 0; id = parent[id] {
				if c, ok := strings.CutPrefix(detail[id], "MATERIALIZE "); ok {
					return c
				}
			}
			return ""
		}
		var plan []string
		for _, id := range order {
			plan = append(plan, under(id)+": "+detail[id])
		}
		whole := strings.Join(plan, "\n")
		reads := map[string]bool{} // the scopes that read resources
		for _, id := range order {
			if strings.Contains(detail[id], " resources ") {
				reads[under(id)] = true
			}
		}
		for _, id := range order {
			d, cte := detail[id], under(id)
			switch {
			case strings.Contains(d, "TEMP B-TREE") && reads[cte]:
				// (Sorting the few rows a branch found is no matter.)
				t.Errorf("%s: the rows of resources are sorted: %q\n%s", name, d, whole)
			case strings.HasPrefix(d, "SCAN resources"):
				t.Errorf("%s: a scan of resources: %q\n%s", name, d, whole)
			case strings.HasPrefix(d, "SEARCH resources") && cte == "sparse" && !strings.Contains(d, "id=?"):
				t.Errorf("%s: the sparse branch reads resources other than by ID: %q\n%s", name, d, whole)
			}
		}
		if name != "page" && !strings.Contains(whole, "cand: SCAN resource_titles VIRTUAL TABLE INDEX 0:M") {
			t.Errorf("%s: the candidates do not come from the title index:\n%s", name, whole)
		}
	}
}

// TestListPlansPostgres: on PostgreSQL, in the plan it plans for every
// call (generic) as in one planned for the call's values (custom), a
// title query one title matches and a plain page read few rows of
// resources, not the workspace's, and a title query every title matches
// reads no more than its bound of candidates and a page.
func TestListPlansPostgres(t *testing.T) {
	ctx := context.Background()
	u, _ := pgtest.Schema(t)
	s, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws := planFixture(t, s, &s.Base)
	if _, err := s.Base.R.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		t.Fatal(err)
	}
	// rows: the candidates (a bound of 4 per row of the page), the branch
	// that runs, and the page; a page of 21, one in 100 marked.
	most := map[string]int{"rare": 10, "page": 30, "dense": 4*21 + 30 + 30}
	for name, q := range planQueries(ws) {
		query, args := s.Base.ListStatement(q)
		conn, err := s.Base.R.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stmt := "plan_" + name
		if _, err := conn.ExecContext(ctx, "PREPARE "+stmt+" AS "+query); err != nil {
			t.Fatal(err)
		}
		// EXECUTE takes its values as literals (EXPLAIN has no parameters).
		params := make([]string, len(args))
		for i, a := range args {
			switch v := a.(type) {
			case string:
				params[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
			case int:
				params[i] = fmt.Sprint(v)
			default:
				t.Fatalf("%s: an argument of type %T", name, a)
			}
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = "+mode); err != nil {
				t.Fatal(err)
			}
			var out string
			if err := conn.QueryRowContext(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE "+stmt+"("+strings.Join(params, ", ")+")").Scan(&out); err != nil {
				t.Fatalf("%s, %s: %v", name, mode, err)
			}
			var plans []struct{ Plan pgPlan }
			if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
				t.Fatalf("%s, %s: %v: %s", name, mode, err, out)
			}
			read, scans := plans[0].Plan.resourceRows()
			if read > most[name] || len(scans) > 0 {
				t.Errorf("%s, %s: %d rows of resources read (at most %d), sequential scans %v:\n%s", name, mode, read, most[name], scans, out)
			}
		}
		if _, err := conn.ExecContext(ctx, "DEALLOCATE "+stmt+"; RESET plan_cache_mode"); err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
}

// pgPlan is a node of EXPLAIN (ANALYZE, FORMAT JSON).
type pgPlan struct {
	NodeType        string   `json:"Node Type"`
	Relation        string   `json:"Relation Name"`
	Rows            float64  `json:"Actual Rows"`
	Loops           float64  `json:"Actual Loops"`
	RemovedByFilter float64  `json:"Rows Removed by Filter"`
	RemovedRecheck  float64  `json:"Rows Removed by Index Recheck"`
	Plans           []pgPlan `json:"Plans"`
}

// resourceRows is how many rows of resources the plan read (kept or
// filtered out), and its sequential scans of resources.
func (p pgPlan) resourceRows() (int, []string) {
	var read float64
	var scans []string
	if p.Relation == "resources" {
		read = (p.Rows + p.RemovedByFilter + p.RemovedRecheck) * p.Loops
		if p.NodeType == "Seq Scan" {
			scans = append(scans, p.NodeType)
		}
	}
	for _, c := range p.Plans {
		r, s := c.resourceRows()
		read += float64(r)
		scans = append(scans, s...)
	}
	return int(read), scans
}
