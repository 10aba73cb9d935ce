package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"foundry/internal/benchtest"
	"foundry/internal/service"
)

// benchNote is a sheet Note of side × side cells for the benchmarks
// below, with the person who edits it.
type benchNote struct {
	svc    *service.Service
	person service.Caller
	id     string
	tab    string
	v      int64
}

func newBenchNote(b *testing.B, side int) *benchNote {
	svc, o, id, tab, v := sheetNote(b, side)
	return &benchNote{svc: svc, person: service.Person(o.Workspace.ID, o.User.ID, o.User.Role), id: id, tab: tab, v: v}
}

// edit writes one cell: the i-th of the first 10 × 10, or with spread > 1
// the same cell of one of spread blocks of cells 97 rows apart.
func (n *benchNote) edit(b *testing.B, i, spread int) {
	res, err := n.svc.EditNoteTab(context.Background(), n.person, service.EditTabArgs{NoteID: n.id, TabID: n.tab, ExpectedVersion: n.v,
		Operation: "sheet_set_range", StartRow: ptr((i*3)%10 + (i%spread)*97), StartCol: ptr((i * 7) % 10), Values: [][]any{{fmt.Sprintf("edit %d", i)}}})
	if err != nil {
		b.Fatal(err)
	}
	n.v = res.Version
}

// cost is the wall time and the process's CPU time of what it ran.
type cost struct{ wall, cpu time.Duration }

func timed(f func()) cost {
	c0, t0 := benchtest.ProcessCPU(), time.Now()
	f()
	return cost{time.Since(t0), benchtest.ProcessCPU() - c0}
}

// interleaved runs each case's step once per iteration, in turn, and
// reports each one's ms and CPU ms per step, and its ratios to the first
// case's: the cases share the machine's load as it comes and goes, and
// CPU time is the process's own, so the ratios hold on a busy machine too.
func interleaved(b *testing.B, unit string, names []string, step func(c, i int) cost) {
	took := make([]cost, len(names))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for c := range names {
			s := step(c, i)
			took[c].wall += s.wall
			took[c].cpu += s.cpu
		}
	}
	b.StopTimer()
	for c, name := range names {
		b.ReportMetric(float64(took[c].wall.Nanoseconds())/float64(b.N)/1e6, "ms/"+unit+"-"+name)
		b.ReportMetric(float64(took[c].cpu.Nanoseconds())/float64(b.N)/1e6, "cpu-ms/"+unit+"-"+name)
		if c > 0 {
			b.ReportMetric(float64(took[c].wall)/float64(took[0].wall), "ratio-"+name)
			b.ReportMetric(float64(took[c].cpu)/float64(took[0].cpu), "cpu-ratio-"+name)
		}
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRestoreOldVersion: restoring the version of ten one-cell edits
// ago through the service, on a durable SQLite store, on Notes whose sheet
// holds 100, 10,000 and 1,000,000 cells, in turn; each restore is followed
// by one more (untimed) one-cell edit, so that every restore changes the
// Note. The edits are the same cells of every Note (the first 10 × 10), so
// ratio-1M (ms per restore of the 1,000,000-cell Note over the 100-cell
// Note's) is what the size of a Note costs a restore (goal: ≤ 2).
// 1M-spread10 places the edits in ten blocks of cells instead: what a
// restore of more changes costs.
func BenchmarkRestoreOldVersion(b *testing.B) {
	cases := []struct {
		name         string
		side, spread int
	}{{"100", 10, 1}, {"10k", 100, 1}, {"1M", 1000, 1}, {"1M-spread10", 1000, 10}}
	notes := make([]*benchNote, len(cases))
	names := make([]string, len(cases))
	for c, k := range cases {
		notes[c], names[c] = newBenchNote(b, k.side), k.name
		for i := range 10 {
			notes[c].edit(b, i, k.spread)
		}
	}
	ctx := context.Background()
	interleaved(b, "restore", names, func(c, i int) cost {
		n := notes[c]
		var res service.NoteRestored
		var err error
		took := timed(func() {
			res, err = n.svc.RestoreVersion(ctx, n.person, service.RestoreArgs{NoteID: n.id, Version: n.v - 10, Guard: service.Guard{ExpectedVersion: n.v}})
		})
		if err != nil {
			b.Fatal(err)
		}
		if res.Version != n.v+1 {
			b.Fatalf("restoring version %d of %d made version %d", n.v-10, n.v, res.Version)
		}
		n.v = res.Version
		n.edit(b, 10+i, cases[c].spread)
		return took
	})
}

// BenchmarkDiffVersion: what one one-cell edit changed (service.DiffVersion
// against the version before), on Notes whose sheet holds 100, 10,000 and
// 1,000,000 cells, in turn: the diff reads the block the edit wrote, not
// the Note (ratios as in BenchmarkRestoreOldVersion).
func BenchmarkDiffVersion(b *testing.B) {
	names := []string{"100", "10k", "1M"}
	notes := make([]*benchNote, len(names))
	for c, side := range []int{10, 100, 1000} {
		notes[c] = newBenchNote(b, side)
		notes[c].edit(b, 4, 1)
	}
	ctx := context.Background()
	interleaved(b, "diff", names, func(c, _ int) cost {
		n := notes[c]
		var d service.VersionChanges
		var err error
		took := timed(func() { d, err = n.svc.DiffVersion(ctx, n.person, service.DiffArgs{NoteID: n.id, Version: n.v}) })
		if err != nil || d.Changes != 1 {
			b.Fatalf("the diff of a one-cell edit: %d changes, %v", d.Changes, err)
		}
		return took
	})
}
