package mcpserver_test

// The published contract, checked against what clients actually receive:
// the tools/list answer over real HTTP (with the top-level securitySchemes
// the handler's cache adds), not the Go definitions.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/mcpserver"
	"foundry/internal/server/servertest"
)

const (
	snapDir         = "__toolsnaps__"
	publishedPath   = "../server/testdata/published-tools.json"
	updateSnapsHint = "run UPDATE_TOOLSNAPS=1 go test ./internal/mcpserver/ and review the schema change"
	// budgetBytesPerTool guards tools/list against schema bloat. The goal
	// is 600 B per tool; with both securitySchemes copies, explicit hints, an
	// outputSchema derived from each result type (its key fields) and every
	// published constraint, Foundry is at ~899 B today (the reference
	// connector: ~769). BenchmarkToolsList reports it.
	budgetBytesPerTool = 900
	goalBytesPerTool   = 600
)

// protocolVariants are the two cached tools/list answers: the plain request
// every 2025-11-25 client sends, and the stateless 2026-07-28 form.
var protocolVariants = []struct {
	name    string
	body    string
	headers map[string]string
}{
	{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil},
	{"2026-07-28",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}},
}

// rpc POSTs one JSON-RPC message to /mcp and returns the response message,
// whether it came as JSON or as a one-event SSE stream.
func rpc(t *testing.T, url, body string, headers map[string]string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /mcp %s: HTTP %d: %s", body, resp.StatusCode, raw)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				return []byte(strings.TrimSpace(d))
			}
		}
		t.Fatalf("POST /mcp %s: SSE answer without a data line: %s", body, raw)
	}
	return raw
}

// rpcResult returns the "result" member, failing on a JSON-RPC error.
func rpcResult(t *testing.T, msg []byte) json.RawMessage {
	t.Helper()
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatalf("JSON-RPC answer: %v: %s", err, msg)
	}
	if m.Error != nil || m.Result == nil {
		t.Fatalf("JSON-RPC answer has no result: %s", msg)
	}
	return m.Result
}

// listedTools is a tools/list answer: the raw result, and each tool's entry
// as sent, by name and in order.
type listedTools struct {
	result  json.RawMessage
	entries map[string]json.RawMessage
	order   []string
}

func fetchToolsList(t *testing.T, e *servertest.Env, variant int) listedTools {
	t.Helper()
	v := protocolVariants[variant]
	res := rpcResult(t, rpc(t, e.URL, v.body, v.headers))
	var r struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("tools/list result: %v", err)
	}
	if r.NextCursor != "" {
		t.Fatalf("tools/list is paged (nextCursor %q); these tests expect one page", r.NextCursor)
	}
	l := listedTools{result: res, entries: map[string]json.RawMessage{}}
	for _, raw := range r.Tools {
		var n struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &n); err != nil || n.Name == "" {
			t.Fatalf("tools/list entry without a name: %s", raw)
		}
		if _, dup := l.entries[n.Name]; dup {
			t.Fatalf("tools/list lists %s twice", n.Name)
		}
		l.entries[n.Name] = raw
		l.order = append(l.order, n.Name)
	}
	return l
}

// decodeJSON decodes keeping numbers exact (1048576 stays 1048576).
func decodeJSON(t *testing.T, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// pretty is the snapshot form: indented, keys sorted (maps marshal sorted),
// no HTML escaping, trailing newline.
func pretty(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(decodeJSON(t, raw)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func toolNames(tools []*mcpserver.Tool) []string {
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Def.Name)
	}
	return names
}

// TestToolSnapshots pins every tool's tools/list entry, exactly as clients
// receive it, so any schema, description or annotation change shows up in
// review as a change to __toolsnaps__/<tool>.snap.
func TestToolSnapshots(t *testing.T) {
	update := os.Getenv("UPDATE_TOOLSNAPS") == "1"
	e := servertest.Start(t, servertest.Options{})
	listed := fetchToolsList(t, e, 0)
	tools := mcpserver.Tools(nil)
	if update {
		if err := os.MkdirAll(snapDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tl := range tools {
		name := tl.Def.Name
		t.Run(name, func(t *testing.T) {
			entry, ok := listed.entries[name]
			if !ok {
				t.Fatalf("%s is in Tools(nil) but not in the served tools/list (default selection)", name)
			}
			got := pretty(t, entry)
			path := filepath.Join(snapDir, name+".snap")
			if update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				t.Fatalf("no snapshot %s for %s; %s", path, name, updateSnapsHint)
			} else if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s's tools/list entry differs from %s (- snapshot, + served):\n%s\n%s", name, path, lineDiff(string(want), string(got)), updateSnapsHint)
			}
		})
	}

	// A snapshot without a tool is a tool removed or renamed: a contract
	// change that must be seen and the file deleted on purpose.
	snaps, err := filepath.Glob(filepath.Join(snapDir, "*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(tools)
	for _, s := range snaps {
		name := strings.TrimSuffix(filepath.Base(s), ".snap")
		if slices.Contains(names, name) {
			continue
		}
		if update {
			if err := os.Remove(s); err != nil {
				t.Fatal(err)
			}
			t.Logf("removed %s: no tool %s any more", s, name)
			continue
		}
		t.Errorf("%s has no tool %s any more; %s", s, name, updateSnapsHint)
	}

	// The stateless (2026-07-28) answer is cached separately; it must carry
	// the same entries, so one set of snapshots covers both.
	newer := fetchToolsList(t, e, 1)
	if !slices.Equal(newer.order, listed.order) {
		t.Errorf("tools/list names differ by protocol: 2025-11-25 %v, 2026-07-28 %v", listed.order, newer.order)
	}
	for name, a := range listed.entries {
		if b, ok := newer.entries[name]; ok && !bytes.Equal(pretty(t, a), pretty(t, b)) {
			t.Errorf("%s: tools/list entry differs by protocol (- 2025-11-25, + 2026-07-28):\n%s", name, lineDiff(string(pretty(t, a)), string(pretty(t, b))))
		}
	}
}

// TestEveryToolDeclaresReadOnlyHintExplicitly reads the raw tools/list: a
// client must never have to assume a default for readOnlyHint, and the hints
// and scopes must agree with the tool's scope.
func TestEveryToolDeclaresReadOnlyHintExplicitly(t *testing.T) {
	e := servertest.Start(t, servertest.Options{})
	scopes := map[string]string{}
	for _, tl := range mcpserver.Tools(nil) {
		scopes[tl.Def.Name] = tl.Scope
	}
	for i, v := range protocolVariants {
		t.Run(v.name, func(t *testing.T) {
			listed := fetchToolsList(t, e, i)
			for _, name := range listed.order {
				var tool map[string]any
				if err := json.Unmarshal(listed.entries[name], &tool); err != nil {
					t.Fatal(err)
				}
				ann, ok := tool["annotations"].(map[string]any)
				if !ok {
					t.Errorf("%s: no annotations object", name)
					continue
				}
				ro, ok := ann["readOnlyHint"]
				if !ok {
					t.Errorf("%s: annotations lack readOnlyHint; declare it explicitly (true or false)", name)
					continue
				}
				scope := scopes[name]
				switch scope {
				case auth.ScopeRead:
					if ro != true {
						t.Errorf("%s: read tool (%s) has readOnlyHint %v, want true", name, scope, ro)
					}
				case auth.ScopeWrite:
					if ro != false {
						t.Errorf("%s: write tool (%s) has readOnlyHint %v, want false", name, scope, ro)
					}
					if d := ann["destructiveHint"]; d != true {
						t.Errorf("%s: write tool (%s) has destructiveHint %v, want true", name, scope, d)
					}
				default:
					t.Errorf("%s: scope %q is neither %s nor %s", name, scope, auth.ScopeRead, auth.ScopeWrite)
					continue
				}
				want := []any{map[string]any{"type": "oauth2", "scopes": []any{scope}}}
				meta, _ := tool["_meta"].(map[string]any)
				if got := meta["securitySchemes"]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s: _meta.securitySchemes = %v, want %v", name, jsonString(got), jsonString(want))
				}
				if got := tool["securitySchemes"]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s: top-level securitySchemes = %v, want %v", name, jsonString(got), jsonString(want))
				}
			}
		})
	}
}

// published is shared/reference/published-tools.json.
type published struct {
	Server struct {
		Capabilities        any    `json:"initialize_capabilities"`
		InstructionsInclude string `json:"initialize_instructions_include"`
	} `json:"server"`
	Scopes struct {
		Read  string `json:"read"`
		Write string `json:"write"`
	} `json:"scopes"`
	ReadTools            []string         `json:"read_tools"`
	ReadToolAnnotations  map[string]any   `json:"read_tool_annotations"`
	WriteTools           []string         `json:"write_tools"`
	WriteToolAnnotations map[string]any   `json:"write_tool_annotations"`
	Tools                []map[string]any `json:"tools"`
}

// notesTools are published tools Foundry already serves; they may not be
// skipped as "not served yet".
var notesTools = []string{"list_note_tabs", "read_note_tab", "read_sheet_range", "list_note_attachments", "create_note_tab", "edit_note_tab", "add_note_source"}

// TestPublishedFragmentsHold checks every recorded fragment of the reference
// connector's tools/list and initialize against ours. Fragments are trimmed:
// what is recorded must hold; what is not recorded is ours to design.
func TestPublishedFragmentsHold(t *testing.T) {
	raw, err := os.ReadFile(publishedPath)
	if err != nil {
		t.Fatal(err)
	}
	var pub published
	if err := json.Unmarshal(raw, &pub); err != nil {
		t.Fatalf("%s: %v", publishedPath, err)
	}
	e := servertest.Start(t, servertest.Options{})
	listed := fetchToolsList(t, e, 0)
	ours := map[string]map[string]any{}
	for name, entry := range listed.entries {
		var m map[string]any
		if err := json.Unmarshal(entry, &m); err != nil {
			t.Fatal(err)
		}
		ours[name] = m
	}
	scopes := map[string]string{}
	for _, tl := range mcpserver.Tools(nil) {
		scopes[tl.Def.Name] = tl.Scope
	}
	for _, name := range notesTools {
		if ours[name] == nil {
			t.Errorf("%s is published and must be served; it is missing from tools/list", name)
		}
	}

	t.Run("scopes", func(t *testing.T) {
		if pub.Scopes.Read != auth.ScopeRead || pub.Scopes.Write != auth.ScopeWrite {
			t.Errorf("published scopes %s/%s, ours %s/%s", pub.Scopes.Read, pub.Scopes.Write, auth.ScopeRead, auth.ScopeWrite)
		}
		for _, c := range []struct {
			names []string
			scope string
			ann   map[string]any
		}{{pub.ReadTools, pub.Scopes.Read, pub.ReadToolAnnotations}, {pub.WriteTools, pub.Scopes.Write, pub.WriteToolAnnotations}} {
			for _, name := range c.names {
				if ours[name] == nil {
					t.Logf("%s: not served yet, skipped", name)
					continue
				}
				if scopes[name] != c.scope {
					t.Errorf("%s: published as %s, ours is %s", name, c.scope, scopes[name])
				}
				if p := subsetMismatch(c.ann, ours[name]["annotations"], "annotations"); p != "" {
					t.Errorf("%s: published annotations for %s tools do not hold: %s", name, c.scope, p)
				}
			}
		}
	})

	for _, frag := range pub.Tools {
		name, _ := frag["name"].(string)
		t.Run(name, func(t *testing.T) {
			tool := ours[name]
			if tool == nil {
				if slices.Contains(notesTools, name) {
					t.Fatalf("%s is published and must be served", name)
				}
				t.Logf("%s: not served yet, skipped", name)
				return
			}
			if d, ok := frag["description"].(string); ok {
				if got, _ := tool["description"].(string); !strings.HasPrefix(got, d) {
					t.Errorf("description must start with the published one\npublished: %s\nours:      %s", d, got)
				}
			}
			if s, ok := frag["inputSchema"]; ok {
				if p := subsetMismatch(s, tool["inputSchema"], "inputSchema"); p != "" {
					t.Errorf("published inputSchema fragment does not hold: %s", p)
				}
			}
			// Annotations: every recorded hint must have the recorded value;
			// hints the authors trimmed (e.g. openWorldHint) are ours.
			if a, ok := frag["annotations"]; ok {
				if p := subsetMismatch(a, tool["annotations"], "annotations"); p != "" {
					t.Errorf("published annotations do not hold: %s", p)
				}
			}
			if s, ok := frag["securitySchemes"]; ok {
				if got := tool["securitySchemes"]; !reflect.DeepEqual(got, s) {
					t.Errorf("securitySchemes = %s, published %s", jsonString(got), jsonString(s))
				}
				meta, _ := tool["_meta"].(map[string]any)
				if got := meta["securitySchemes"]; !reflect.DeepEqual(got, s) {
					t.Errorf("_meta.securitySchemes = %s, published %s", jsonString(got), jsonString(s))
				}
			}
		})
	}

	t.Run("initialize", func(t *testing.T) {
		// initialize starts a session: it needs a token (without one it
		// is 401, TestInitializeNeedsCredentials in internal/server).
		msg := rpc(t, e.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"contract-test","version":"1"}}}`,
			map[string]string{"Authorization": "Bearer " + e.Token(t, nil, auth.ScopeRead)})
		var res struct {
			Capabilities map[string]any `json:"capabilities"`
			Instructions string         `json:"instructions"`
		}
		if err := json.Unmarshal(rpcResult(t, msg), &res); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(any(res.Capabilities), pub.Server.Capabilities) {
			t.Errorf("initialize capabilities = %s, published %s", jsonString(res.Capabilities), jsonString(pub.Server.Capabilities))
		}
		if !strings.Contains(res.Instructions, pub.Server.InstructionsInclude) {
			t.Errorf("initialize instructions lack %q: %q", pub.Server.InstructionsInclude, res.Instructions)
		}
	})
}

// subsetMismatch reports where want does not hold in got ("" if it holds):
// every key of a want object must be in got with a value that holds in turn;
// arrays must have the same length and hold element by element; other
// values must be equal. Keys starting with "_" are the recorders' notes, so
// {"_recorded": "…"} only asks that the property exist.
func subsetMismatch(want, got any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, ours is %s", at, jsonString(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			if strings.HasPrefix(k, "_") {
				continue
			}
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing (published %s)", at, k, jsonString(w[k])))
				continue
			}
			if p := subsetMismatch(w[k], gv, at+"."+k); p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, "; ")
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: published %s, ours %s", at, jsonString(want), jsonString(got))
		}
		var out []string
		for i := range w {
			if p := subsetMismatch(w[i], g[i], fmt.Sprintf("%s[%d]", at, i)); p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, "; ")
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("%s: published %s, ours %s", at, jsonString(want), jsonString(got))
		}
		return ""
	}
}

func TestSubsetMismatch(t *testing.T) {
	ours := map[string]any{"type": "object", "required": []any{"a", "b"}, "properties": map[string]any{
		"a": map[string]any{"type": "string", "maxLength": 5.0}, "b": map[string]any{"enum": []any{"x", "y"}}}}
	for _, c := range []struct {
		frag string
		ok   bool
	}{
		{`{}`, true},
		{`{"properties":{"a":{}}}`, true},
		{`{"properties":{"a":{"_recorded":"anything"}}}`, true},
		{`{"properties":{"a":{"type":"string"}},"_recorded":"x"}`, true},
		{`{"properties":{"c":{}}}`, false},
		{`{"properties":{"a":{"maxLength":6}}}`, false},
		{`{"properties":{"b":{"enum":["x"]}}}`, false},
		{`{"properties":{"b":{"enum":["y","x"]}}}`, false},
		{`{"required":["a","b"]}`, true},
		{`{"additionalProperties":false}`, false},
	} {
		var frag any
		json.Unmarshal([]byte(c.frag), &frag)
		if p := subsetMismatch(frag, ours, "s"); (p == "") != c.ok {
			t.Errorf("subsetMismatch(%s) = %q, want holds=%v", c.frag, p, c.ok)
		}
	}
}

// TestToolsListBytesPerTool reports the weight of tools/list, which every
// client loads into its model's context, and holds it to a budget.
func TestToolsListBytesPerTool(t *testing.T) {
	e := servertest.Start(t, servertest.Options{})
	listed := fetchToolsList(t, e, 0)
	n := len(listed.order)
	if n == 0 {
		t.Fatal("tools/list is empty")
	}
	names := slices.Clone(listed.order)
	sort.Slice(names, func(i, j int) bool { return len(listed.entries[names[i]]) > len(listed.entries[names[j]]) })
	sum := 0
	for _, name := range names {
		b := len(listed.entries[name])
		sum += b
		t.Logf("%-26s %6d bytes", name, b)
	}
	avg := float64(len(listed.result)) / float64(n)
	t.Logf("tools/list result: %d bytes for %d tools (entries %d bytes); %.0f bytes per tool (goal ≤ %d, budget %d; published reference: 45368 bytes / 59 tools ≈ 769)",
		len(listed.result), n, sum, avg, goalBytesPerTool, budgetBytesPerTool)
	if avg > budgetBytesPerTool {
		t.Errorf("tools/list averages %.0f bytes per tool, over the %d-byte budget: trim descriptions or schemas", avg, budgetBytesPerTool)
	}
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// lineDiff is a small LCS line diff with two lines of context, enough to
// show a reviewer what changed in a snapshot.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var ops []line
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, line{' ', x[i]})
			i++
			j++
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, line{'+', y[j]})
			j++
		default:
			ops = append(ops, line{'-', x[i]})
			i++
		}
	}
	const ctx, maxLines = 2, 60
	var out []string
	last := -1
	for k, o := range ops {
		near := false
		for d := max(0, k-ctx); d <= min(len(ops)-1, k+ctx); d++ {
			if ops[d].op != ' ' {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		if last >= 0 && k > last+1 {
			out = append(out, "  …")
		}
		last = k
		out = append(out, string(o.op)+" "+o.text)
		if len(out) >= maxLines {
			out = append(out, "  … (diff truncated)")
			break
		}
	}
	return strings.Join(out, "\n")
}
