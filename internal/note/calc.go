package note

import (
	"runtime"
	"strings"
	"sync"
	"time"

	"foundry/internal/formula"
	"foundry/internal/problem"
)

// Sheets compute. A cell whose text starts with "=" is a formula; its value
// is computed here, in the write that changed what it reads, and stored
// beside the cells (Sheet.Values), so a read costs what it reads.
//
// Recalc follows a dependency graph of the tab's formulas: a write
// recomputes the formulas that read a changed cell, then those that read
// them, and so on, each once, in an order where what a formula reads is
// computed before it. Cells on a circular path get #CYCLE!. The graph is
// built once for a tab and handed to each next version of the Note as it
// is written; a version read from the store builds it again.

// MaxRecalcCells is how many formulas one write may recompute; a write
// that would recompute more is refused, so no write's cost is unbounded.
const MaxRecalcCells = 100_000

var recalcLimit = MaxRecalcCells // tests lower it

// IsFormula reports whether a cell holds a formula: text that starts with
// "=" and has more after it ("=" alone is text).
func IsFormula(v any) bool {
	s, ok := v.(string)
	return ok && len(s) > 1 && s[0] == '='
}

// CheckFormula applies the rules of a formula cell; field names the cell.
func CheckFormula(src, field string) error {
	if _, err := formula.Parse(src); err != nil {
		return problem.New(problem.Invalid, field, "%v; fix the formula (a cell whose text starts with \"=\" is a formula)", err)
	}
	return nil
}

// calcBox holds a tab's graph until the next version takes it.
type calcBox struct {
	mu sync.Mutex
	g  *calcGraph
}

func (b *calcBox) take() *calcGraph {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.g
	b.g = nil
	return g
}

type cellAt struct{ s, r, c int32 }

type blockAt struct{ s, br, bc int32 }

// rect is a reference resolved to a sheet of the tab (s < 0: no such sheet).
type rect struct{ s, r0, c0, r1, c1 int32 }

func (q rect) has(x cellAt) bool {
	return q.s == x.s && q.r0 <= x.r && x.r <= q.r1 && q.c0 <= x.c && x.c <= q.c1
}

// compiled is one formula cell of the graph; dead once its cell changed.
type compiled struct {
	at   cellAt
	f    *formula.Formula // nil: the text does not parse
	refs []rect
	vol  bool
	dead bool
}

// maxBucketBlocks is how many blocks a range may cover and still be found
// through the blocks it covers; a larger one (a whole column) is looked at
// for every change.
const maxBucketBlocks = 64

type calcGraph struct {
	sig      string
	names    map[string]int32
	formulas map[cellAt]*compiled
	single   map[cellAt][]*compiled  // readers of exactly one cell
	buckets  map[blockAt][]*compiled // readers of a range, by the blocks it covers
	big      []*compiled             // readers of a range of more blocks
	volatile map[cellAt]*compiled
}

// sheetSig names a tab's sheets in order: a graph holds sheet indexes and
// names, so it is for one such list only.
func sheetSig(t *Tab) string {
	var b strings.Builder
	for _, sh := range t.Sheets {
		b.WriteString(sh.ID)
		b.WriteByte(0)
		b.WriteString(strings.ToLower(sh.Name))
		b.WriteByte(0)
	}
	return b.String()
}

func newGraph(t *Tab) *calcGraph {
	g := &calcGraph{sig: sheetSig(t), names: map[string]int32{}, formulas: map[cellAt]*compiled{},
		single: map[cellAt][]*compiled{}, buckets: map[blockAt][]*compiled{}, volatile: map[cellAt]*compiled{}}
	for i, sh := range t.Sheets {
		if _, ok := g.names[strings.ToLower(sh.Name)]; !ok {
			g.names[strings.ToLower(sh.Name)] = int32(i)
		}
	}
	return g
}

// add compiles the formula src at x into the graph.
func (g *calcGraph) add(x cellAt, src string) *compiled {
	f, err := formula.Parse(src)
	if err != nil {
		f = nil
	}
	return g.link(x, f)
}

// parseAll parses formulas on every core: parsing is most of building a
// graph (17–20 µs a formula, most of it tokenizing), linking is cheap and
// stays on one goroutine. A formula that does not parse is nil.
func parseAll(srcs []string) []*formula.Formula {
	out := make([]*formula.Formula, len(srcs))
	workers := min(runtime.GOMAXPROCS(0), len(srcs)/parseChunk+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(srcs); i += workers {
				if f, err := formula.Parse(srcs[i]); err == nil {
					out[i] = f
				}
			}
		})
	}
	wg.Wait()
	return out
}

// parseChunk is how many formulas a parsing goroutine is worth.
const parseChunk = 256

// link puts the parsed formula f (nil: it does not parse) at x into the
// graph.
func (g *calcGraph) link(x cellAt, f *formula.Formula) *compiled {
	c := &compiled{at: x}
	g.formulas[x] = c
	if f == nil {
		return c
	}
	c.f, c.vol = f, f.Volatile()
	if c.vol {
		g.volatile[x] = c
	}
	for _, ref := range f.Refs() {
		s := x.s
		if ref.Sheet != "" {
			var ok bool
			if s, ok = g.names[strings.ToLower(ref.Sheet)]; !ok {
				s = -1
			}
		}
		q := rect{s, int32(ref.R0), int32(ref.C0), int32(ref.R1), int32(ref.C1)}
		c.refs = append(c.refs, q)
		if s < 0 {
			continue
		}
		if q.r0 == q.r1 && q.c0 == q.c1 {
			k := cellAt{s, q.r0, q.c0}
			g.single[k] = append(g.single[k], c)
			continue
		}
		br0, br1, bc0, bc1 := q.r0/BlockRows, q.r1/BlockRows, q.c0/BlockCols, q.c1/BlockCols
		if int64(br1-br0+1)*int64(bc1-bc0+1) > maxBucketBlocks {
			g.big = append(g.big, c)
			continue
		}
		for br := br0; br <= br1; br++ {
			for bc := bc0; bc <= bc1; bc++ {
				k := blockAt{s, br, bc}
				g.buckets[k] = append(g.buckets[k], c)
			}
		}
	}
	return c
}

// drop takes the formula at x, if any, out of the graph.
func (g *calcGraph) drop(x cellAt) {
	if c, ok := g.formulas[x]; ok {
		c.dead = true
		delete(g.formulas, x)
		delete(g.volatile, x)
	}
}

// readers calls fn for each live formula that reads cell x, once per
// reference; dead entries are swept on the way.
func (g *calcGraph) readers(x cellAt, fn func(*compiled)) {
	if l, ok := g.single[x]; ok {
		if l = sweep(l); len(l) == 0 {
			delete(g.single, x)
		} else {
			g.single[x] = l
		}
		for _, c := range l {
			fn(c)
		}
	}
	k := blockAt{x.s, x.r / BlockRows, x.c / BlockCols}
	if l, ok := g.buckets[k]; ok {
		if l = sweep(l); len(l) == 0 {
			delete(g.buckets, k)
		} else {
			g.buckets[k] = l
		}
		for _, c := range l {
			if readsIn(c, x) {
				fn(c)
			}
		}
	}
	g.big = sweep(g.big)
	for _, c := range g.big {
		if readsIn(c, x) {
			fn(c)
		}
	}
}

func readsIn(c *compiled, x cellAt) bool {
	for _, q := range c.refs {
		if (q.r0 != q.r1 || q.c0 != q.c1) && q.has(x) {
			return true
		}
	}
	return false
}

func sweep(l []*compiled) []*compiled {
	for i, c := range l {
		if c.dead {
			out := l[:i:i]
			for _, c := range l[i:] {
				if !c.dead {
					out = append(out, c)
				}
			}
			return out
		}
	}
	return l
}

// Recalc computes the formulas of next's sheet tabs that what changed since
// base reads, directly or through other formulas, and stores their values
// in next. It refuses (problem.Limit) a write that would recompute more
// than MaxRecalcCells formulas.
func Recalc(base, next *Doc, now time.Time) error {
	baseTabs := map[string]*Tab{}
	for i := range base.Tabs {
		if base.Tabs[i].Type == TypeSheet {
			baseTabs[base.Tabs[i].ID] = &base.Tabs[i]
		}
	}
	for i := range next.Tabs {
		if t := &next.Tabs[i]; t.Type == TypeSheet {
			if err := recalcTab(baseTabs[t.ID], t, now); err != nil {
				return err
			}
		}
	}
	return nil
}

func recalcTab(bt, t *Tab, now time.Time) error {
	var g *calcGraph
	full := bt == nil || sheetSig(bt) != sheetSig(t)
	if bt != nil {
		g = bt.calc.take()
	}
	if g != nil && full {
		g = nil
	}
	baseSheets := map[string]*Sheet{}
	if bt != nil {
		for i := range bt.Sheets {
			baseSheets[bt.Sheets[i].ID] = &bt.Sheets[i]
		}
	}
	for i := range t.Sheets {
		sh := &t.Sheets[i]
		// An edit that rebuilt the sheet (replace_tab_data) starts from
		// the values it had; what changed is computed again below.
		if sh.Values == nil {
			if bs := baseSheets[sh.ID]; bs != nil && !full {
				sh.Values = append([][]any(nil), bs.Values...)
			}
		}
		if full {
			sh.Values = nil // every formula is computed again
		}
		if len(sh.Values) > len(sh.Cells) {
			sh.Values = sh.Values[:len(sh.Cells)]
		}
	}

	var seeds []cellAt
	built := g == nil
	if built {
		g = newGraph(t)
		var at []cellAt
		var srcs []string
		for s := range t.Sheets {
			sh := &t.Sheets[s]
			for r, row := range sh.Cells {
				for c, v := range row {
					if src, ok := v.(string); ok && IsFormula(src) {
						x := cellAt{int32(s), int32(r), int32(c)}
						at, srcs = append(at, x), append(srcs, src)
						// Everything is computed on a new tab; a formula
						// never computed (or stored before sheets
						// computed) is computed now.
						if full || valueAt(sh, r, c) == nil {
							seeds = append(seeds, x)
						}
					}
				}
			}
		}
		for i, f := range parseAll(srcs) {
			g.link(at[i], f)
		}
	}
	if !full {
		for s := range t.Sheets {
			sh := &t.Sheets[s]
			bs := baseSheets[sh.ID]
			for r := range max(len(bs.Cells), len(sh.Cells)) {
				var a, b []any
				inA, inB := r < len(bs.Cells), r < len(sh.Cells)
				if inA {
					a = bs.Cells[r]
				}
				if inB {
					b = sh.Cells[r]
				}
				if inA && inB && sameRow(a, b) {
					continue
				}
				for c := range max(len(a), len(b)) {
					var x, y any
					if c < len(a) {
						x = a[c]
					}
					if c < len(b) {
						y = b[c]
					}
					if cellEqual(x, y) {
						continue
					}
					at := cellAt{int32(s), int32(r), int32(c)}
					seeds = append(seeds, at)
					if built {
						continue // the graph was built from these cells
					}
					g.drop(at)
					if IsFormula(y) {
						g.add(at, y.(string))
					}
				}
			}
		}
	}
	for x := range g.volatile {
		seeds = append(seeds, x)
	}

	cv := &calcRun{t: t, g: g, now: now, copied: map[cellAt]bool{}}
	// The formulas to compute, and which of them read which.
	type node struct {
		c     *compiled
		indeg int
		out   []*compiled
	}
	dirty := map[cellAt]*node{}
	var queue []cellAt
	mark := func(c *compiled) (*node, error) {
		if n, ok := dirty[c.at]; ok {
			return n, nil
		}
		if len(dirty) >= recalcLimit {
			return nil, problem.New(problem.Limit, "values", "this change would recompute more than %d formulas (the limit of recalculation per write); change fewer cells at once, or split the formulas that read them over several sheet tabs", recalcLimit)
		}
		n := &node{c: c}
		dirty[c.at] = n
		queue = append(queue, c.at)
		return n, nil
	}
	for _, x := range seeds {
		if c, ok := g.formulas[x]; ok {
			if _, err := mark(c); err != nil {
				return err
			}
		} else {
			queue = append(queue, x)
			cv.clear(x) // no formula there now: no value beside it
		}
	}
	// Each cell is in the queue once: a changed cell as a seed, a formula
	// when it is marked.
	for len(queue) > 0 {
		x := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		from := dirty[x]
		var err error
		g.readers(x, func(c *compiled) {
			if err != nil {
				return
			}
			var n *node
			if n, err = mark(c); err != nil {
				return
			}
			if from != nil {
				from.out = append(from.out, c)
				n.indeg++
			}
		})
		if err != nil {
			return err
		}
	}
	// Compute in an order where what a formula reads comes first; what is
	// left is on a cycle, or reads one.
	var ready []*node
	for _, n := range dirty {
		if n.indeg == 0 {
			ready = append(ready, n)
		}
	}
	done := 0
	for len(ready) > 0 {
		n := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		cv.compute(n.c)
		done++
		for _, c := range n.out {
			m := dirty[c.at]
			if m.indeg--; m.indeg == 0 {
				ready = append(ready, m)
			}
		}
	}
	if done < len(dirty) {
		// What is left is on a cycle or reads one: the cells on a cycle
		// (a strongly connected part, or a cell that reads itself) are
		// #CYCLE!, then the rest is computed in order after them.
		left := map[*compiled]bool{}
		for _, n := range dirty {
			if n.indeg > 0 {
				left[n.c] = true
			}
		}
		outs := func(c *compiled) []*compiled { return dirty[c.at].out }
		onCycle := cycles(left, outs)
		indeg := map[*compiled]int{}
		for c := range left {
			if onCycle[c] {
				cv.set(c.at, formula.ErrCycle)
				continue
			}
			indeg[c] += 0
			for _, o := range outs(c) {
				if left[o] && !onCycle[o] {
					indeg[o]++
				}
			}
		}
		var order []*compiled
		for c, d := range indeg {
			if d == 0 {
				order = append(order, c)
			}
		}
		for len(order) > 0 {
			c := order[len(order)-1]
			order = order[:len(order)-1]
			cv.compute(c)
			for _, o := range outs(c) {
				if left[o] && !onCycle[o] {
					if indeg[o]--; indeg[o] == 0 {
						order = append(order, o)
					}
				}
			}
		}
	}
	t.calc = &calcBox{g: g}
	return nil
}

// ValueAt is the computed value of the formula at (r, c) of sh (nil if
// there is none).
func ValueAt(sh *Sheet, r, c int) any { return valueAt(sh, r, c) }

func valueAt(sh *Sheet, r, c int) any {
	if r < len(sh.Values) && c < len(sh.Values[r]) {
		return sh.Values[r][c]
	}
	return nil
}

// calcRun is one recalculation: the formula.Context its formulas read.
type calcRun struct {
	t      *Tab
	g      *calcGraph
	now    time.Time
	self   int32
	copied map[cellAt]bool // rows of Values already copied in this run (c is 0)
	widths map[int32]int
}

func (cv *calcRun) compute(c *compiled) {
	if c.f == nil {
		cv.set(c.at, formula.ErrName)
		return
	}
	cv.self = c.at.s
	v := c.f.Eval(cv, int(c.at.r), int(c.at.c))
	switch n := v.(type) {
	case nil:
		v = 0.0 // a formula that reads an empty cell shows 0
	case float64:
		v = formula.Significant(n)
	}
	cv.set(c.at, v)
}

func (cv *calcRun) set(x cellAt, v any) {
	sh := &cv.t.Sheets[x.s]
	r, c := int(x.r), int(x.c)
	for len(sh.Values) <= r {
		sh.Values = append(sh.Values, []any{})
	}
	row := sh.Values[r]
	k := cellAt{x.s, x.r, 0}
	if !cv.copied[k] {
		// A new row, never the old one changed in place: the version
		// before this write shares it.
		row = append(make([]any, 0, max(len(row), c+1)), row...)
		cv.copied[k] = true
	}
	for len(row) <= c {
		row = append(row, nil)
	}
	row[c] = v
	sh.Values[r] = row
}

func (cv *calcRun) clear(x cellAt) {
	if valueAt(&cv.t.Sheets[x.s], int(x.r), int(x.c)) != nil {
		cv.set(x, nil)
	}
}

func (cv *calcRun) sheet(name string) (int32, bool) {
	if name == "" {
		return cv.self, true
	}
	s, ok := cv.g.names[strings.ToLower(name)]
	return s, ok
}

// Cell is a cell's value: a formula's computed value, or what the cell
// holds.
func (cv *calcRun) Cell(name string, r, c int) (any, bool) {
	s, ok := cv.sheet(name)
	if !ok {
		return nil, false
	}
	sh := &cv.t.Sheets[s]
	if r < 0 || c < 0 || r >= len(sh.Cells) || c >= len(sh.Cells[r]) {
		return nil, true
	}
	v := sh.Cells[r][c]
	if IsFormula(v) {
		return valueAt(sh, r, c), true
	}
	return v, true
}

// Size is the extent of a sheet's grid.
func (cv *calcRun) Size(name string) (int, int, bool) {
	s, ok := cv.sheet(name)
	if !ok {
		return 0, 0, false
	}
	sh := &cv.t.Sheets[s]
	if cv.widths == nil {
		cv.widths = map[int32]int{}
	}
	w, ok := cv.widths[s]
	if !ok {
		w = gridWidth(sh.Cells)
		cv.widths[s] = w
	}
	return len(sh.Cells), w, true
}

// Now is the time TODAY() and NOW() read: the write's.
func (cv *calcRun) Now() time.Time { return cv.now }

// cycles finds the cells of nodes that are on a cycle of edges outs
// (Tarjan's strongly connected components).
func cycles(nodes map[*compiled]bool, outs func(*compiled) []*compiled) map[*compiled]bool {
	index, low := map[*compiled]int{}, map[*compiled]int{}
	onStack := map[*compiled]bool{}
	var stack []*compiled
	on := map[*compiled]bool{}
	next := 0
	var visit func(c *compiled)
	visit = func(c *compiled) {
		index[c], low[c] = next, next
		next++
		stack = append(stack, c)
		onStack[c] = true
		self := false
		for _, o := range outs(c) {
			if !nodes[o] {
				continue
			}
			if o == c {
				self = true
			}
			if _, seen := index[o]; !seen {
				visit(o)
				low[c] = min(low[c], low[o])
			} else if onStack[o] {
				low[c] = min(low[c], index[o])
			}
		}
		if low[c] != index[c] {
			return
		}
		var part []*compiled
		for {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[top] = false
			part = append(part, top)
			if top == c {
				break
			}
		}
		if len(part) > 1 || self {
			for _, p := range part {
				on[p] = true
			}
		}
	}
	for c := range nodes {
		if _, seen := index[c]; !seen {
			visit(c)
		}
	}
	return on
}
