package browsertest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
)

// TestSheetFormulaUnits runs the sheet grid's pure functions' tests
// (web/test/sheet-formula.test.js: formula copies, number formats) in
// node, bundled with esbuild as the app is. Without node it skips, unless
// FOUNDRY_TEST_NODE=required.
func TestSheetFormulaUnits(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("FOUNDRY_TEST_NODE") == "required" {
			t.Fatalf("FOUNDRY_TEST_NODE=required: %v", err)
		}
		t.Skipf("sheet formula tests skipped: %v (set FOUNDRY_TEST_NODE=required to fail instead)", err)
	}
	web, err := filepath.Abs(filepath.Join("..", "..", "web"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sheet-formula.test.mjs")
	res := api.Build(api.BuildOptions{
		AbsWorkingDir: web,
		EntryPoints:   []string{"test/sheet-formula.test.js"},
		Outfile:       out,
		Bundle:        true,
		Write:         true,
		Format:        api.FormatESModule,
		Platform:      api.PlatformNode,
		Target:        api.ES2022,
		External:      []string{"node:*"},
		Tsconfig:      filepath.Join(web, "tsconfig.json"),
		LogLevel:      api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		t.Fatalf("bundling the tests: %s", strings.Join(api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage}), ""))
	}
	cmd := exec.Command(node, "--test", "--test-reporter=spec", out)
	cmd.Env = append(os.Environ(), "NODE_OPTIONS=")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, b)
	}
	t.Logf("%s", b)
}
