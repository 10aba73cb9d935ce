package service_test

import (
	"context"
	"strings"
	"testing"

	"foundry/internal/service"
)

// The service's refusals say what is wrong in words no door owns: no MCP
// tool, no CLI command. Each door adds its own next step.
func TestRefusalsSpeakNoDoorsLanguage(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		var errs []error
		_, err := f.svc.ListNoteTabs(ctx, service.Agent(f.read), "note_missing")
		errs = append(errs, err)
		_, err = f.svc.ReadRoom(ctx, service.Agent(f.read), "room_missing")
		errs = append(errs, err)
		_, _, err = f.svc.ProposalDetail(ctx, f.op, "prop_missing")
		errs = append(errs, err)
		_, err = f.svc.DecideProposal(ctx, f.op, "prop_missing", true)
		errs = append(errs, err)
		_, err = f.svc.ProposeRepoApp(ctx, service.Agent(f.write), service.ProposeRepoArgs{RoomID: f.roomID, Name: "x", RepositoryID: "repo_missing", VersionID: "v", IdempotencyKey: "12345678"})
		errs = append(errs, err)
		for i, err := range errs {
			if err == nil {
				t.Fatalf("case %d: no refusal", i)
			}
			for _, door := range []string{"list_", "read_", "foundry ", "`", "this connection"} {
				if strings.Contains(err.Error(), door) {
					t.Errorf("case %d: %q speaks a door's language (%q)", i, err, door)
				}
			}
		}
	})
}
