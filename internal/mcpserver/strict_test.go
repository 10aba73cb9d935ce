package mcpserver

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/strictjson/strictjsontest"
)

// TestArgumentsAreReadStrictly: every body of the table both doors share,
// sent over HTTP as a tool's arguments, is refused as a tool result with
// the code and the field the REST API answers for the same bytes (api's
// TestBodiesAreReadStrictly). A raw control character makes the whole
// JSON-RPC message invalid JSON: the SDK refuses the message, and no tool
// runs.
func TestArgumentsAreReadStrictly(t *testing.T) {
	e := sqliteEnv(t)
	url, secret := e.serve(t, slog.Default(), []string{auth.ScopeRead})
	for _, c := range strictjsontest.Cases {
		status, raw := callOverHTTP(t, url, secret, "list_notes", c.Body)
		if c.Raw {
			if status != http.StatusBadRequest || strings.Contains(string(raw), "structuredContent") {
				t.Errorf("%s: %d %s; want the message refused", c.What, status, raw)
			}
			continue
		}
		data := string(raw)
		if i := strings.LastIndex(data, "data: "); i >= 0 {
			data = data[i+len("data: "):]
		}
		var m struct {
			Result struct {
				IsError           bool
				StructuredContent map[string]any
			}
		}
		json.Unmarshal([]byte(data), &m)
		sc := m.Result.StructuredContent
		if status != http.StatusOK || !m.Result.IsError || sc["error"] != "invalid_argument" || sc["field"] != c.Field {
			t.Errorf("%s: %s → %d %s; want invalid_argument naming %q", c.What, c.Body, status, raw, c.Field)
		}
	}
}

// callOverHTTP posts one tools/call of tool with args (JSON text, sent as
// it is) to the endpoint at url with the bearer secret.
func callOverHTTP(t *testing.T, url, secret, tool, args string) (int, []byte) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}
