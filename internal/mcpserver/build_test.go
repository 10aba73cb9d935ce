package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"foundry/internal/auth"
	"foundry/internal/mcpclient"
	"foundry/internal/room"
	"foundry/internal/service"
)

// TestAgentIsToldItsSnippetDoesNotCompile: over the real endpoint with the
// go-sdk client, a snippet that does not compile answers its errors (file,
// line, column, text, the line) and a next_step that says to fix them and
// propose again; its status says the proposal's build failed; the fixed
// snippet answers compiled with the review step; once approved, the app's
// build is compiled too. On both stores.
func TestAgentIsToldItsSnippetDoesNotCompile(t *testing.T) {
	for _, e := range bothStores(t) {
		t.Run(e.name, func(t *testing.T) {
			url, secret := e.serve(t, slog.New(slog.NewTextHandler(io.Discard, nil)), []string{auth.ScopeRead, auth.ScopeWrite})
			ctx := context.Background()
			cs, err := mcpclient.Dial(ctx, "build-test", url, secret, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			call := func(tool string, args map[string]any) mcpclient.Result {
				t.Helper()
				r, err := mcpclient.Call(ctx, cs, tool, args)
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if r.IsError {
					t.Fatalf("%s: %s", tool, r.Text)
				}
				return r
			}
			propose := func(files map[string]string) mcpclient.Result {
				t.Helper()
				return call("propose_room_snippet_app", map[string]any{"room_id": e.roomID, "name": "Clock", "files": files,
					"idempotency_key": room.SnippetKey(e.roomID, "Clock", files)})
			}
			broken := map[string]string{room.EntryPoint: "export default function App() {\n  return <p>{missing(</p>\n}\n"}
			for _, round := range []string{"first", "replay"} {
				r := propose(broken)
				b, _ := r.Data["build"].(map[string]any)
				errs, _ := b["errors"].([]any)
				if b["state"] != service.BuildFailed || len(errs) == 0 || b["error_count"] != float64(len(errs)) {
					t.Fatalf("%s: a snippet that does not compile answers build %v", round, r.Data["build"])
				}
				first, _ := errs[0].(map[string]any)
				if first["file"] != room.EntryPoint || first["line"] != float64(2) || first["column"] == nil || first["text"] == "" ||
					first["line_text"] != "  return <p>{missing(</p>" {
					t.Errorf("%s: the first error does not say where and what: %v", round, first)
				}
				step := r.Str("next_step")
				for _, want := range []string{"does not compile", "fix those errors", "propose_room_snippet_app again", "room_id " + e.roomID, r.Str("proposal_id"), "decline"} {
					if !strings.Contains(step, want) {
						t.Errorf("%s: next_step lacks %q: %s", round, want, step)
					}
				}
				if strings.Contains(step, "Approve and create") {
					t.Errorf("%s: next_step of code that does not compile sends the user to approve it: %s", round, step)
				}
			}
			bad := propose(broken)
			st := call("read_room_app_status", map[string]any{"room_id": e.roomID, "instance_id": bad.Str("instance_id")})
			pb, _ := st.Data["proposal_build"].(map[string]any)
			if st.Str("state") != room.StatePendingReview || st.Str("proposal_id") != bad.Str("proposal_id") || pb["state"] != service.BuildFailed || st.Data["app_build"] != nil {
				t.Errorf("status of the broken proposal: %v", st.Data)
			}
			if errs, _ := pb["errors"].([]any); len(errs) == 0 || errs[0].(map[string]any)["line"] != float64(2) || errs[0].(map[string]any)["line_text"] != nil {
				t.Errorf("the status's errors say where, and no source line: %v", pb["errors"])
			}

			fixed := map[string]string{room.EntryPoint: "export default function App() {\n  return <p>{new Date().toISOString()}</p>\n}\n"}
			good := propose(fixed)
			if b, _ := good.Data["build"].(map[string]any); b["state"] != service.BuildCompiled || b["errors"] != nil {
				t.Errorf("the fixed snippet answers build %v", good.Data["build"])
			}
			if step := good.Str("next_step"); step != ReviewStep("", good.Str("proposal_id")) {
				t.Errorf("the fixed snippet's next_step is not the review step: %s", step)
			}
			st = call("read_room_app_status", map[string]any{"room_id": e.roomID, "instance_id": good.Str("instance_id")})
			if pb, _ := st.Data["proposal_build"].(map[string]any); pb["state"] != service.BuildCompiled {
				t.Errorf("status of the fixed proposal: %v", st.Data)
			}
			if _, err := e.svc.DecideProposal(ctx, service.Operator(e.owner), good.Str("proposal_id"), true); err != nil {
				t.Fatal(err)
			}
			st = call("read_room_app_status", map[string]any{"room_id": e.roomID, "instance_id": good.Str("instance_id")})
			ab, _ := st.Data["app_build"].(map[string]any)
			if b, _ := st.Data["build"].(map[string]any); st.Str("state") != room.StateInLauncher || ab["state"] != service.BuildCompiled || b["state"] != room.BuildNone {
				t.Errorf("status of the approved app: %v", st.Data)
			}
		})
	}
}
