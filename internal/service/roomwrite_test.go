package service_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/service"
	"foundry/internal/store"
)

func (f *fixture) roomVersion(t *testing.T, c service.Caller, id string) int64 {
	t.Helper()
	v, err := f.svc.ReadRoom(context.Background(), c, id)
	if err != nil {
		t.Fatal(err)
	}
	return v.Version
}

func TestRenameRoom(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		mem := store.User{ID: store.NewID("usr"), Workspace: f.ws, Email: "m@example.org", Name: "Mia", Role: "member", CreatedAt: time.Now().UTC()}
		if err := f.svc.Store.CreateUser(ctx, mem); err != nil {
			t.Fatal(err)
		}
		member := service.Person(f.ws, mem.ID, mem.Role)
		v := f.roomVersion(t, f.person, f.roomID)

		// Refusals name the field, and nothing changes.
		_, err := f.svc.RenameRoom(ctx, f.person, service.RoomRenameArgs{RoomID: f.roomID, Name: "  "})
		wantProblem(t, err, problem.Invalid, "name")
		_, err = f.svc.RenameRoom(ctx, f.person, service.RoomRenameArgs{RoomID: f.roomID, Name: "Launch"})
		wantProblem(t, err, service.PreconditionRequired, "expected_version")
		_, err = f.svc.RenameRoom(ctx, f.person, service.RoomRenameArgs{RoomID: f.roomID, Name: "Launch", Guard: service.Guard{ExpectedVersion: v + 3}})
		wantProblem(t, err, problem.Conflict, "expected_version")
		_, err = f.svc.RenameRoom(ctx, member, service.RoomRenameArgs{RoomID: f.roomID, Name: "Launch", Guard: service.Guard{ExpectedVersion: v}})
		wantProblem(t, err, service.NotReviewer, "room_id", "rename it")
		_, err = f.svc.RenameRoom(ctx, service.Agent(f.write), service.RoomRenameArgs{RoomID: f.roomID, Name: "Launch", Guard: service.Guard{ExpectedVersion: v}})
		wantProblem(t, err, service.PersonOnly, "")
		_, err = f.svc.RenameRoom(ctx, f.person, service.RoomRenameArgs{RoomID: "room_nope", Name: "Launch", Guard: service.Guard{ExpectedVersion: 1}})
		wantProblem(t, err, problem.NotFound, "room_id")

		w, err := f.svc.RenameRoom(ctx, f.person, service.RoomRenameArgs{RoomID: f.roomID, Name: "  Launch plan ", Guard: service.Guard{ExpectedVersion: v}})
		if err != nil || w.Version != v+1 || w.RoomID != f.roomID {
			t.Fatalf("rename: %+v %v", w, err)
		}
		got, err := f.svc.ReadRoom(ctx, member, f.roomID)
		if err != nil || got.Name != "Launch plan" {
			t.Fatalf("read after rename: %+v %v", got, err)
		}
		list, err := f.svc.ListRooms(ctx, service.Agent(f.read), service.Page{})
		if err != nil || len(list.Rooms) != 1 || list.Rooms[0].Name != "Launch plan" {
			t.Fatalf("agent's list after rename: %+v %v", list, err)
		}
		// The operator (the CLI) is version-free.
		if _, err := f.svc.RenameRoom(ctx, f.op, service.RoomRenameArgs{RoomID: f.roomID, Name: "Ops"}); err != nil {
			t.Fatalf("operator renames: %v", err)
		}
	})
}

func TestDeleteRoomStopsItsLauncherAndClosesItsProposals(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		agent := service.Agent(f.write)
		app := f.prPropose(t, f.roomID, "Approved", prFiles("a"))
		if _, err := f.svc.DecideProposal(ctx, f.person, app.ProposalID, true); err != nil {
			t.Fatal(err)
		}
		pending := f.prPropose(t, f.roomID, "Pending", prFiles("p"))
		other, err := f.svc.CreateRoom(ctx, f.op, "Other room")
		if err != nil {
			t.Fatal(err)
		}
		v := f.roomVersion(t, f.person, f.roomID)

		_, err = f.svc.DeleteRoom(ctx, f.person, service.RoomArgs{RoomID: f.roomID})
		wantProblem(t, err, service.PreconditionRequired, "expected_version")
		_, err = f.svc.DeleteRoom(ctx, agent, service.RoomArgs{RoomID: f.roomID, Guard: service.Guard{ExpectedVersion: v}})
		wantProblem(t, err, service.PersonOnly, "")
		if _, err := f.svc.ReadRoom(ctx, f.person, f.roomID); err != nil {
			t.Fatalf("a refused delete changed the Room: %v", err)
		}

		w, err := f.svc.DeleteRoom(ctx, f.person, service.RoomArgs{RoomID: f.roomID, Guard: service.Guard{ExpectedVersion: v}})
		if err != nil || w.Version != v+1 {
			t.Fatalf("delete: %+v %v", w, err)
		}

		// Every act on the deleted Room answers not found, naming room_id.
		gone := func(what string, err error) {
			t.Helper()
			p := wantProblem(t, err, problem.NotFound, "room_id")
			if p == nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		_, err = f.svc.ReadRoom(ctx, f.person, f.roomID)
		gone("read_room (person)", err)
		_, err = f.svc.ReadRoom(ctx, agent, f.roomID)
		gone("read_room (agent)", err)
		_, err = f.svc.ListRoomApps(ctx, agent, service.RoomAppsArgs{RoomID: f.roomID})
		gone("list_room_apps", err)
		_, err = f.svc.ReadRoomAppStatus(ctx, agent, service.AppArgs{RoomID: f.roomID, InstanceID: app.InstanceID})
		gone("read_room_app_status", err)
		_, err = f.svc.ProposeSnippet(ctx, agent, service.ProposeSnippetArgs{RoomID: f.roomID, Name: "Late", Files: prFiles("l"), IdempotencyKey: room.SnippetKey(f.roomID, "Late", prFiles("l"))})
		gone("propose", err)
		_, err = f.svc.EditApp(ctx, f.person, service.EditAppArgs{RoomID: f.roomID, InstanceID: app.InstanceID, Name: ptr("New"), Guard: service.Guard{ExpectedVersion: w.Version}})
		gone("EditApp", err)
		_, err = f.svc.RemoveApp(ctx, f.person, service.AppWriteArgs{RoomID: f.roomID, InstanceID: app.InstanceID, Guard: service.Guard{ExpectedVersion: w.Version}})
		gone("RemoveApp", err)
		_, err = f.svc.Bundle(ctx, f.person, service.AppArgs{RoomID: f.roomID, InstanceID: app.InstanceID})
		gone("bundle", err)
		_, err = f.svc.RenameRoom(ctx, f.person, service.RoomRenameArgs{RoomID: f.roomID, Name: "Again", Guard: service.Guard{ExpectedVersion: w.Version}})
		gone("rename", err)
		_, err = f.svc.DeleteRoom(ctx, f.person, service.RoomArgs{RoomID: f.roomID, Guard: service.Guard{ExpectedVersion: w.Version}})
		gone("delete again", err)
		_, err = f.svc.DecideProposal(ctx, f.person, pending.ProposalID, true)
		gone("approve a proposal of it", err)
		_, _, err = f.svc.ProposalDetail(ctx, f.person, pending.ProposalID)
		gone("review a proposal of it", err)

		// Its pending proposal was declined in the same write, by the person.
		o, err := f.svc.Store.GetObject(ctx, store.KindProposal, pending.ProposalID)
		if err != nil {
			t.Fatal(err)
		}
		var pr room.Proposal
		mustUnmarshal(t, o.Doc, &pr)
		if pr.Status != room.StatusDeclined || pr.DecidedBy != "user:"+f.owner {
			t.Fatalf("pending proposal after delete: %+v", pr)
		}
		// Its launcher is empty in the stored document.
		r, err := f.svc.Store.Get(ctx, store.TypeRoom, f.roomID)
		if err != nil {
			t.Fatal(err)
		}
		var d room.Doc
		mustUnmarshal(t, r.Doc, &d)
		if n := len(room.Launcher(&d)); n != 0 {
			t.Fatalf("launcher after delete has %d apps", n)
		}

		// It leaves every list; the other Room stays.
		for _, c := range []service.Caller{f.person, agent} {
			list, err := f.svc.ListRooms(ctx, c, service.Page{})
			if err != nil || len(list.Rooms) != 1 || list.Rooms[0].RoomID != other.RoomID {
				t.Fatalf("list after delete: %+v %v", list, err)
			}
		}
		if ps, err := f.svc.ListProposals(ctx, f.person, service.ListProposalsArgs{}); err != nil || len(ps) != 0 {
			t.Fatalf("inbox after delete: %+v %v", ps, err)
		}
		if n, err := f.svc.PendingCount(ctx, f.person); err != nil || n != 0 {
			t.Fatalf("pending count after delete: %d %v", n, err)
		}
	})
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
