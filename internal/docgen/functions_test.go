package docgen_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"foundry/internal/formula"
)

// The README lists every function sheets compute, and only those.
func TestReadmeListsTheFormulaFunctions(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)Functions \((\d+)\):\n(.*?)\.\n`).FindSubmatch(b)
	if m == nil {
		t.Fatal(`README.md has no "Functions (N):" list ending with a full stop`)
	}
	listed := strings.Fields(strings.ReplaceAll(string(m[2]), ",", " "))
	want := formula.Functions()
	if strings.Join(listed, " ") != strings.Join(want, " ") || string(m[1]) != fmt.Sprint(len(want)) {
		t.Fatalf("README.md lists %d functions (%s):\n%s\nthe engine has %d:\n%s", len(listed), m[1], strings.Join(listed, ", "), len(want), strings.Join(want, ", "))
	}
}
