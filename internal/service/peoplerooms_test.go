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
			p, err := f.svc.GetProposal(ctx, f.ws, c.w.ProposalID)
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
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		mem := store.User{ID: store.NewID("usr"), Workspace: f.ws, Email: "m@example.org", Name: "Mia", Role: "member", CreatedAt: time.Now().UTC()}
		if err := f.svc.Store.CreateUser(ctx, mem); err != nil {
			t.Fatal(err)
		}
		owner, member := service.PersonCaller(f.ws, f.owner), service.PersonCaller(f.ws, mem.ID)
		w := f.prPropose(t, f.roomID, "Owner's", prFiles("o"))
		if ps, err := f.svc.PeopleProposals(ctx, member, room.StatusPending); err != nil || len(ps) != 0 {
			t.Fatalf("member's inbox: %v %v", ps, err)
		}
		if n, err := f.svc.PeoplePendingCount(ctx, owner); err != nil || n != 1 {
			t.Fatalf("owner's count: %d %v", n, err)
		}
		if _, err := f.svc.PeopleDecide(ctx, member, w.ProposalID, true); prCode(err) != service.NotReviewer {
			t.Fatalf("member approves: %v", err)
		}
		if _, _, err := f.svc.PeopleProposalDetail(ctx, member, w.ProposalID); prCode(err) != service.NotReviewer {
			t.Fatalf("member reads: %v", err)
		}
		if _, err := f.svc.PeopleDecide(ctx, service.TokenCaller(f.write), w.ProposalID, true); prCode(err) != service.PersonOnly {
			t.Fatalf("a token approves: %v", err)
		}
		d, err := f.svc.PeopleDecide(ctx, owner, w.ProposalID, true)
		if err != nil || d.Status != room.StatusApproved || d.InstanceID != w.InstanceID {
			t.Fatalf("owner approves: %+v %v", d, err)
		}
		// The CLI's approve, again, by the same person: their decision stands.
		if err := f.svc.ApproveProposal(ctx, f.ws, f.owner, w.ProposalID); err != nil {
			t.Fatalf("approve again from the CLI: %v", err)
		}
		if err := f.svc.DeclineProposal(ctx, f.ws, f.owner, w.ProposalID); prCode(err) != service.AlreadyDecided {
			t.Fatalf("decline after approve from the CLI: %v", err)
		}
		b, err := f.svc.PeopleBundle(ctx, member, f.roomID, w.InstanceID)
		if err != nil || !b.OK() || !strings.Contains(b.JS, "__foundryApp") {
			t.Fatalf("bundle: %+v %v", b, err)
		}
	})
}

func TestConcurrentDecisionsMakeOne(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		owner := service.PersonCaller(f.ws, f.owner)
		for round := range 4 {
			w := f.prPropose(t, f.roomID, fmt.Sprintf("Race %d", round), prFiles(fmt.Sprint(round)))
			const n = 6
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = f.svc.PeopleDecide(ctx, owner, w.ProposalID, i%2 == 0)
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
		p, err := f.svc.ListProposals(ctx, f.ws, f.roomID, room.StatusPending)
		if err != nil || len(p) != 0 {
			t.Fatalf("pending after the races: %v %v", p, err)
		}
	})
}
