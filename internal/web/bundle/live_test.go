package bundle_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
)

// TestLiveHub runs the live hub's tests (web/test/live-hub.test.js, the
// hub of src/live/hub.ts against a fake EventSource and clock) in node,
// bundled here with esbuild as the app is: node runs no TypeScript itself.
// Without node the test skips, unless FOUNDRY_TEST_NODE=required.
func TestLiveHub(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("FOUNDRY_TEST_NODE") == "required" {
			t.Fatalf("FOUNDRY_TEST_NODE=required: %v", err)
		}
		t.Skipf("live hub test skipped: %v (set FOUNDRY_TEST_NODE=required to fail instead)", err)
	}
	web, err := filepath.Abs(filepath.Join("..", "..", "..", "web"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "live-hub.test.mjs")
	res := api.Build(api.BuildOptions{
		AbsWorkingDir: web,
		EntryPoints:   []string{"test/live-hub.test.js"},
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
		t.Fatalf("bundling the hub's tests: %s", strings.Join(api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage}), ""))
	}
	cmd := exec.Command(node, "--test", "--test-reporter=spec", out)
	cmd.Env = append(os.Environ(), "NODE_OPTIONS=")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, b)
	}
	t.Logf("%s", b)
}
