package service_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/service"
	"foundry/internal/store"
)

func prFiles(s string) map[string]string {
	return map[string]string{"src/App.tsx": fmt.Sprintf("export default function App() { return <p>%s</p> }\n", s)}
}

func (f *fixture) prPropose(t *testing.T, roomID, name string, files map[string]string) service.Proposed {
	t.Helper()
	w, err := f.svc.ProposeSnippet(context.Background(), service.Agent(f.write), service.ProposeSnippetArgs{RoomID: roomID, Name: name, Files: files, IdempotencyKey: room.SnippetKey(roomID, name, files)})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func prCode(err error) string {
	var p *problem.Problem
	if errors.As(err, &p) {
		return p.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestProposalKeepsItsCompileResultAndNoCode(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		ok := f.prPropose(t, f.roomID, "Fine", prFiles("fine"))
		bad := f.prPropose(t, f.roomID, "Broken", map[string]string{"src/App.tsx": "import x from \"left-pad\";\nexport default () => <p>{x}</p>;\n"})
		for _, c := range []struct {
			w    service.Proposed
			good bool
		}{{ok, true}, {bad, false}} {
			o, err := f.svc.Store.GetObject(ctx, store.KindProposal, c.w.ProposalID)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(o.Doc), "__foundryApp") {
				t.Fatalf("the stored proposal holds compiled code: %s", o.Doc)
			}
			p, _, err := f.svc.ProposalDetail(ctx, f.op, c.w.ProposalID)
			if err != nil || p.Compile == nil || p.Compile.OK != c.good || len(p.Compile.Hash) != 64 {
				t.Fatalf("proposal %s compile = %+v %v", c.w.ProposalID, p.Compile, err)
			}
			if !c.good && (p.Compile.Errors[0].File != "src/App.tsx" || p.Compile.Errors[0].Line != 1) {
				t.Fatalf("compile errors = %+v", p.Compile.Errors)
			}
		}
	})
}

func TestOnlyTheRoomOwnerOrAWorkspaceOwnerDecides(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		mem := store.User{ID: store.NewID("usr"), Workspace: f.ws, Email: "m@example.org", Name: "Mia", Role: "member", CreatedAt: time.Now().UTC()}
		if err := f.svc.Store.CreateUser(ctx, mem); err != nil {
			t.Fatal(err)
		}
		owner, member := f.person, service.Person(f.ws, mem.ID, mem.Role)
		w := f.prPropose(t, f.roomID, "Owner's", prFiles("o"))
		if ps, err := f.svc.ListProposals(ctx, member, service.ListProposalsArgs{Status: room.StatusPending}); err != nil || len(ps) != 0 {
			t.Fatalf("member's inbox: %v %v", ps, err)
		}
		if n, err := f.svc.PendingCount(ctx, owner); err != nil || n != 1 {
			t.Fatalf("owner's count: %d %v", n, err)
		}
		if _, err := f.svc.DecideProposal(ctx, member, w.ProposalID, true); prCode(err) != service.NotReviewer {
			t.Fatalf("member approves: %v", err)
		}
		if _, _, err := f.svc.ProposalDetail(ctx, member, w.ProposalID); prCode(err) != service.NotReviewer {
			t.Fatalf("member reads: %v", err)
		}
		if _, err := f.svc.DecideProposal(ctx, service.Agent(f.write), w.ProposalID, true); prCode(err) != service.PersonOnly {
			t.Fatalf("a token approves: %v", err)
		}
		d, err := f.svc.DecideProposal(ctx, owner, w.ProposalID, true)
		if err != nil || d.Status != room.StatusApproved || d.InstanceID != w.InstanceID {
			t.Fatalf("owner approves: %+v %v", d, err)
		}
		// A second decision names the first, and who made it (so a door can
		// tell the same person's second click).
		for _, approve := range []bool{true, false} {
			_, err := f.svc.DecideProposal(ctx, f.op, w.ProposalID, approve)
			p := wantProblem(t, err, service.AlreadyDecided, "proposal_id", "already approved by")
			if p.Details["decision"] != room.StatusApproved || p.Details["decided_by_actor"] != "user:"+f.owner {
				t.Fatalf("second decision (approve %v): %+v", approve, p.Details)
			}
		}
		b, err := f.svc.Bundle(ctx, member, service.AppArgs{RoomID: f.roomID, InstanceID: w.InstanceID})
		if err != nil || !b.OK() || !strings.Contains(b.JS, "__foundryApp") {
			t.Fatalf("bundle: %+v %v", b, err)
		}
	})
}

func TestConcurrentDecisionsMakeOne(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		owner := f.person
		for round := range 4 {
			w := f.prPropose(t, f.roomID, fmt.Sprintf("Race %d", round), prFiles(fmt.Sprint(round)))
			const n = 6
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = f.svc.DecideProposal(ctx, owner, w.ProposalID, i%2 == 0)
				}()
			}
			wg.Wait()
			wins := 0
			for _, err := range errs {
				switch prCode(err) {
				case "":
					wins++
				case service.AlreadyDecided:
				default:
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if wins != 1 {
				t.Fatalf("round %d: %d decisions won; want exactly 1 (%v)", round, wins, errs)
			}
		}
		p, err := f.svc.ListProposals(ctx, f.op, service.ListProposalsArgs{RoomID: f.roomID, Status: room.StatusPending})
		if err != nil || len(p) != 0 {
			t.Fatalf("pending after the races: %v %v", p, err)
		}
	})
}
