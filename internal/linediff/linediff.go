// Package linediff compares two texts line by line (Myers' algorithm) and
// lays the result out side by side, for the console's conflict page.
package linediff

import "slices"

// Op is what an edit does.
type Op int

const (
	Equal  Op = iota // the line is in both
	Delete           // only in a
	Insert           // only in b
)

// Edit is one step of the script turning a into b: A indexes a (Equal,
// Delete), B indexes b (Equal, Insert).
type Edit struct {
	Op   Op
	A, B int
}

// Lines returns a shortest edit script turning a into b, or false when it
// needs more than maxChanges deleted and inserted lines: the cost grows
// with the square of the changes, so a caller shows wholly different
// texts without a diff.
func Lines(a, b []string, maxChanges int) ([]Edit, bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	mid, ok := myers(a[pre:len(a)-suf], b[pre:len(b)-suf], maxChanges)
	if !ok {
		return nil, false
	}
	edits := make([]Edit, 0, pre+len(mid)+suf)
	for i := 0; i < pre; i++ {
		edits = append(edits, Edit{Equal, i, i})
	}
	for _, e := range mid {
		edits = append(edits, Edit{e.Op, e.A + pre, e.B + pre})
	}
	for i := 0; i < suf; i++ {
		edits = append(edits, Edit{Equal, len(a) - suf + i, len(b) - suf + i})
	}
	return edits, true
}

// myers is Myers' O(ND) search; trace[d] keeps the furthest x reached on
// each diagonal k in [-d, d] after d changes, for the walk back.
func myers(a, b []string, maxChanges int) ([]Edit, bool) {
	n, m := len(a), len(b)
	if n+m == 0 {
		return nil, true
	}
	off := n + m
	v := make([]int, 2*off+2)
	var trace [][]int
	for d := 0; d <= n+m && d <= maxChanges; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: b[y] inserted
			} else {
				x = v[off+k-1] + 1 // right: a[x] deleted
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, slices.Clone(v[off-d:off+d+1]))
				return walkBack(trace, n, m), true
			}
		}
		trace = append(trace, slices.Clone(v[off-d:off+d+1]))
	}
	return nil, false
}

func walkBack(trace [][]int, n, m int) []Edit {
	var edits []Edit
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // diagonal k is at prev[k+d-1]
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
			prevK = k + 1
		}
		prevX := prev[prevK+d-1]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			edits = append(edits, Edit{Equal, x, y})
		}
		if x == prevX {
			y--
			edits = append(edits, Edit{Insert, x, y})
		} else {
			x--
			edits = append(edits, Edit{Delete, x, y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		edits = append(edits, Edit{Equal, x, y})
	}
	slices.Reverse(edits)
	return edits
}

// Cell is one side of a row: line number N (from 1; 0 for no line) and
// its text, Changed when the line is only on this side.
type Cell struct {
	N       int
	Text    string
	Changed bool
}

// Row is one row of a side-by-side view, or Gap equal lines left out.
type Row struct {
	Left, Right Cell
	Gap         int
}

// SideBySide lays edits out in rows: equal lines face each other, a run
// of deleted lines faces the run of inserted lines that replaced it, and
// equal lines more than context away from a change are folded into gaps.
// A single such line is kept: its gap row would take the same room and
// hide it.
func SideBySide(a, b []string, edits []Edit, context int) []Row {
	var rows []Row
	var dels, ins []int
	flush := func() {
		for i := 0; i < max(len(dels), len(ins)); i++ {
			var r Row
			if i < len(dels) {
				r.Left = Cell{dels[i] + 1, a[dels[i]], true}
			}
			if i < len(ins) {
				r.Right = Cell{ins[i] + 1, b[ins[i]], true}
			}
			rows = append(rows, r)
		}
		dels, ins = dels[:0], ins[:0]
	}
	for _, e := range edits {
		switch e.Op {
		case Equal:
			flush()
			rows = append(rows, Row{Left: Cell{e.A + 1, a[e.A], false}, Right: Cell{e.B + 1, b[e.B], false}})
		case Delete:
			dels = append(dels, e.A)
		case Insert:
			ins = append(ins, e.B)
		}
	}
	flush()

	keep := make([]bool, len(rows))
	for i, r := range rows {
		if r.Left.Changed || r.Right.Changed {
			for j := max(0, i-context); j <= min(len(rows)-1, i+context); j++ {
				keep[j] = true
			}
		}
	}
	var out []Row
	for i := 0; i < len(rows); {
		if keep[i] {
			out = append(out, rows[i])
			i++
			continue
		}
		j := i
		for j < len(rows) && !keep[j] {
			j++
		}
		if j-i == 1 {
			out = append(out, rows[i])
		} else {
			out = append(out, Row{Gap: j - i})
		}
		i = j
	}
	return out
}
