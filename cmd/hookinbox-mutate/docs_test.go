package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/guarantees.md names each mutation in the row of the promise it
// breaks, and names no mutation the table does not have.
func TestGuaranteesDocMatchesTheTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "guarantees.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // promise → its row
	for _, line := range strings.Split(string(b), "\n") {
		if promise, ok := strings.CutPrefix(line, "| **"); ok {
			promise, _, _ = strings.Cut(promise, ".**")
			rows[promise] = line
		}
	}
	known := map[string]bool{}
	for _, m := range mutations {
		known[m.Name] = true
		row, ok := rows[m.Promise]
		if !ok {
			t.Errorf("mutation %s: no row for %q in docs/guarantees.md", m.Name, m.Promise)
			continue
		}
		if !strings.Contains(lastCell(row), "`"+m.Name+"`") {
			t.Errorf("mutation %s: not named in the row of %q", m.Name, m.Promise)
		}
	}
	name := regexp.MustCompile("`([a-z0-9-]+)`")
	for promise, row := range rows {
		for _, n := range name.FindAllStringSubmatch(lastCell(row), -1) {
			if !known[n[1]] {
				t.Errorf("row %q names %s, which is not in the table", promise, n[1])
			}
		}
	}
}

func lastCell(row string) string {
	cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(row), "|"), "|")
	return cells[len(cells)-1]
}
