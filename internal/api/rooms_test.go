package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"foundry/internal/service"
)

func (x *rmEnv) room(t *testing.T, id string) resp {
	t.Helper()
	r := x.do(t, req{method: "GET", path: "/api/rooms/" + id})
	r.want(t, "GET room", http.StatusOK, "")
	return r
}

func (x *rmEnv) approved(t *testing.T, roomID, name string) service.Proposed {
	t.Helper()
	w := x.propose(t, roomID, name, rmFiles(name))
	x.do(t, req{method: "POST", path: "/api/proposals/" + w.ProposalID + "/approve"}).want(t, "approve "+name, http.StatusOK, "")
	return w
}

func TestLauncherRenameReorderRemove(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		a := x.approved(t, x.RoomID, "Alpha")
		b := x.approved(t, x.RoomID, "Beta")
		r := x.room(t, x.RoomID)
		if r.body["can_manage"] != true || r.body["owner"].(map[string]any)["name"] != e.Owner.User.Name {
			t.Fatalf("room = %s", r.raw)
		}
		order := rmIDs(r, "apps", "instance_id")
		if len(order) != 3 || order[1] != a.InstanceID || order[2] != b.InstanceID {
			t.Fatalf("launcher = %v", order)
		}
		v := r.num("version")
		if r.header.Get("ETag") != fmt.Sprintf(`"%d"`, v) {
			t.Fatalf("ETag %q, version %d", r.header.Get("ETag"), v)
		}
		app := func(id string) string { return "/api/rooms/" + x.RoomID + "/apps/" + id }

		// Without a precondition: 428; with a stale one: 412 and the current version.
		x.do(t, req{method: "PATCH", path: app(a.InstanceID), body: map[string]any{"name": "A"}}).want(t, "no If-Match", http.StatusPreconditionRequired, "precondition_required")
		x.do(t, req{method: "DELETE", path: app(a.InstanceID)}).want(t, "DELETE without If-Match", http.StatusPreconditionRequired, "precondition_required")
		r = x.do(t, req{method: "PATCH", path: app(a.InstanceID), body: map[string]any{"name": "A"}, header: ifMatch(v - 1)})
		r.want(t, "stale If-Match", http.StatusPreconditionFailed, "version_conflict")
		if r.num("current_version") != v || r.body["field"] != "If-Match" || !strings.Contains(r.body["detail"].(string), "GET /api/rooms/"+x.RoomID) {
			t.Fatalf("412 = %s", r.raw)
		}
		x.do(t, req{method: "PATCH", path: app(a.InstanceID), body: map[string]any{"name": "A", "expected_version": v + 5}}).want(t, "ahead", http.StatusPreconditionFailed, "version_conflict")
		x.do(t, req{method: "PATCH", path: app(a.InstanceID), body: map[string]any{"name": "A", "expected_version": v}, header: ifMatch(v + 1)}).want(t, "both, differing", http.StatusBadRequest, "")

		// Rename.
		r = x.do(t, req{method: "PATCH", path: app(a.InstanceID), body: map[string]any{"name": "  Alpha ✓  "}, header: ifMatch(v)})
		r.want(t, "rename", http.StatusOK, "")
		if r.num("version") != v+1 || r.body["room_id"] != x.RoomID || r.header.Get("ETag") != fmt.Sprintf(`"%d"`, v+1) {
			t.Fatalf("rename = %s", r.raw)
		}
		v++
		// Reorder: Beta first.
		r = x.do(t, req{method: "PATCH", path: app(b.InstanceID), body: map[string]any{"position": 0, "expected_version": v}})
		r.want(t, "reorder", http.StatusOK, "")
		v++
		r = x.room(t, x.RoomID)
		got := rmIDs(r, "apps", "instance_id")
		if got[0] != b.InstanceID || got[2] != a.InstanceID || r.body["apps"].([]any)[2].(map[string]any)["name"] != "Alpha ✓" {
			t.Fatalf("after rename and reorder: %s", r.raw)
		}
		for i, x := range r.body["apps"].([]any) {
			if x.(map[string]any)["position"] != float64(i) {
				t.Fatalf("positions = %s", r.raw)
			}
		}
		// Hostile input names the field.
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"position": 3}, "position"},
			{map[string]any{"position": -1}, "position"},
			{map[string]any{"name": "x\u202ey"}, "name"},
			{map[string]any{"name": "   "}, "name"},
			{map[string]any{"name": strings.Repeat("n", 201)}, "name"},
			{map[string]any{}, "name"},
			{map[string]any{"colour": "red"}, "colour"},
			{map[string]any{"position": "first"}, "position"},
		} {
			r := x.do(t, req{method: "PATCH", path: app(a.InstanceID), body: c.body, header: ifMatch(v)})
			if r.status/100 != 4 || r.body["field"] != c.field {
				t.Errorf("PATCH %v: %d %s; want a 4xx naming %s", c.body, r.status, r.raw, c.field)
			}
		}
		x.do(t, req{method: "PATCH", path: app("app-999"), body: map[string]any{"name": "N"}, header: ifMatch(v)}).want(t, "unknown app", http.StatusNotFound, "not_found")
		x.do(t, req{method: "PATCH", path: "/api/rooms/room_nope/apps/app-1", body: map[string]any{"name": "N"}, header: ifMatch(1)}).want(t, "unknown room", http.StatusNotFound, "not_found")
		x.do(t, req{method: "PATCH", path: app("app-1%00"), body: map[string]any{"name": "N"}, header: ifMatch(v)}).want(t, "NUL in the ID", http.StatusBadRequest, "")

		// A member who does not own the Room: 403, nothing written.
		x.as(t, &x.member, req{method: "PATCH", path: app(a.InstanceID), body: map[string]any{"name": "Mine"}, header: ifMatch(v)}).want(t, "member rename", http.StatusForbidden, service.NotReviewer)
		x.as(t, &x.member, req{method: "DELETE", path: app(a.InstanceID), header: ifMatch(v)}).want(t, "member remove", http.StatusForbidden, service.NotReviewer)
		if m := x.as(t, &x.member, req{method: "GET", path: "/api/rooms/" + x.RoomID}); m.body["can_manage"] != false || m.num("version") != v {
			t.Fatalf("member's view = %s", m.raw)
		}

		// Remove: gone from the launcher, no bundle, and not twice.
		x.do(t, req{method: "GET", path: app(a.InstanceID) + "/bundle"}).want(t, "bundle before removal", http.StatusOK, "")
		r = x.do(t, req{method: "DELETE", path: app(a.InstanceID), header: ifMatch(v)})
		r.want(t, "remove", http.StatusOK, "")
		v++
		if r.num("version") != v {
			t.Fatalf("remove = %s", r.raw)
		}
		if ids := rmIDs(x.room(t, x.RoomID), "apps", "instance_id"); len(ids) != 2 || rmHas(ids, a.InstanceID) {
			t.Fatalf("launcher after remove = %v", ids)
		}
		x.do(t, req{method: "GET", path: app(a.InstanceID) + "/bundle"}).want(t, "bundle after removal", http.StatusNotFound, "not_found")
		x.do(t, req{method: "DELETE", path: app(a.InstanceID), header: ifMatch(v)}).want(t, "remove again", http.StatusNotFound, "not_found")
		// Ana manages her own Room.
		m := x.approved(t, x.memberRoom, "Hers")
		mv := x.room(t, x.memberRoom).num("version")
		x.as(t, &x.member, req{method: "PATCH", path: "/api/rooms/" + x.memberRoom + "/apps/" + m.InstanceID, body: map[string]any{"name": "Hers ✓"}, header: ifMatch(mv)}).want(t, "member renames in her Room", http.StatusOK, "")
		// The agent sees the new name and the removal (one launcher).
		view, err := x.Server.Service.ReadRoom(context.Background(), x.agent, x.RoomID)
		if err != nil || len(view.Apps) != 2 || view.Apps[0].InstanceID != b.InstanceID {
			t.Fatalf("agent's read_room = %+v %v", view, err)
		}
	})
}

func TestRoomsListAndRepositoryApps(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		ctx := context.Background()
		svc := x.Server.Service
		repos, err := svc.ListRepositories(ctx, x.agent, service.Page{})
		if err != nil || len(repos.Repositories) == 0 {
			t.Fatalf("repositories: %+v %v", repos, err)
		}
		repo := repos.Repositories[0]
		w, err := svc.ProposeRepoApp(ctx, x.agent, service.ProposeRepoArgs{RoomID: x.RoomID, Name: "Timer", RepositoryID: repo.ID, VersionID: repo.Versions[0].ID, IdempotencyKey: "repo-proposal-1"})
		if err != nil {
			t.Fatal(err)
		}
		r := x.do(t, req{method: "GET", path: "/api/proposals/" + w.ProposalID})
		r.want(t, "repository proposal", http.StatusOK, "")
		if r.body["compile"] != nil || r.body["repository"].(map[string]any)["name"] != repo.Name || r.num("file_count") != 2 || len(r.body["files"].([]any)) != 2 {
			t.Fatalf("repository proposal = %s", r.raw)
		}
		if f := r.body["files"].([]any)[0].(map[string]any); f["path"] != "package.json" || !strings.Contains(f["text"].(string), "standup-timer") {
			t.Fatalf("first file = %v", f)
		}
		x.do(t, req{method: "POST", path: "/api/proposals/" + w.ProposalID + "/approve"}).want(t, "approve repository app", http.StatusOK, "")
		r = x.room(t, x.RoomID)
		last := r.body["apps"].([]any)[len(r.body["apps"].([]any))-1].(map[string]any)
		if last["kind"] != "repository" || last["repository"].(map[string]any)["version_id"] != repo.Versions[0].ID || last["repository"].(map[string]any)["build_state"] != "pinned" {
			t.Fatalf("repository app = %v", last)
		}
		x.do(t, req{method: "GET", path: "/api/rooms/" + x.RoomID + "/apps/" + w.InstanceID + "/bundle"}).want(t, "repository bundle", http.StatusNotFound, "not_found")

		r = x.do(t, req{method: "GET", path: "/api/rooms"})
		r.want(t, "rooms", http.StatusOK, "")
		if ids := rmIDs(r, "rooms", "room_id"); len(ids) != 2 || !rmHas(ids, x.RoomID) || !rmHas(ids, x.memberRoom) {
			t.Fatalf("rooms = %s", r.raw)
		}
		for _, v := range r.body["rooms"].([]any) {
			rm := v.(map[string]any)
			if rm["room_id"] == x.RoomID && (rm["apps"] != 2.0 || rm["can_manage"] != true) {
				t.Fatalf("demo room entry = %v", rm)
			}
			if rm["room_id"] == x.memberRoom && (rm["owner"].(map[string]any)["name"] != "Ana" || rm["can_manage"] != true) {
				t.Fatalf("Ana's room as the workspace owner sees it = %v", rm)
			}
		}
		x.do(t, req{method: "GET", path: "/api/rooms?x=1"}).want(t, "a stray parameter", http.StatusBadRequest, "")
		x.do(t, req{method: "GET", path: "/api/rooms/room_nope"}).want(t, "unknown room", http.StatusNotFound, "not_found")
		x.do(t, req{method: "GET", path: "/api/rooms", anon: true}).want(t, "signed out", http.StatusUnauthorized, "")
	})
}

// rmSamples validates a success (and a refusal) of every Rooms and
// proposals route against the OpenAPI document.
func rmSamples(t *testing.T, e *notesEnv, v *validator) {
	t.Helper()
	x := rmStart(t, e)
	a := x.approved(t, x.RoomID, "Sample")
	p := x.propose(t, x.RoomID, "Pending sample", rmFiles("p"))
	bad := x.propose(t, x.RoomID, "Broken sample", map[string]string{"src/App.tsx": "export default ("})
	ver := x.room(t, x.RoomID).num("version")
	app := "/api/rooms/" + x.RoomID + "/apps/" + a.InstanceID
	v.check("GET", "/api/rooms", x.do(t, req{method: "GET", path: "/api/rooms"}))
	v.check("GET", "/api/rooms/{room_id}", x.do(t, req{method: "GET", path: "/api/rooms/" + x.RoomID}))
	v.check("GET", "/api/rooms/{room_id}", x.do(t, req{method: "GET", path: "/api/rooms/room_nope"}))
	v.check("GET", "/api/rooms/{room_id}/apps/{instance_id}/bundle", x.do(t, req{method: "GET", path: app + "/bundle"}))
	v.check("GET", "/api/rooms/{room_id}/apps/{instance_id}/bundle", x.do(t, req{method: "GET", path: "/api/rooms/" + x.RoomID + "/apps/" + p.InstanceID + "/bundle"}))
	v.check("PATCH", "/api/rooms/{room_id}/apps/{instance_id}", x.do(t, req{method: "PATCH", path: app, body: map[string]any{"name": "S", "position": 0}, header: ifMatch(ver)}))
	v.check("PATCH", "/api/rooms/{room_id}/apps/{instance_id}", x.do(t, req{method: "PATCH", path: app, body: map[string]any{"name": "S"}, header: ifMatch(ver)}))
	v.check("PATCH", "/api/rooms/{room_id}/apps/{instance_id}", x.do(t, req{method: "PATCH", path: app, body: map[string]any{"name": "S"}}))
	v.check("GET", "/api/proposals", x.do(t, req{method: "GET", path: "/api/proposals"}))
	v.check("GET", "/api/proposals", x.do(t, req{method: "GET", path: "/api/proposals?status=approved"}))
	v.check("GET", "/api/proposals", x.do(t, req{method: "GET", path: "/api/proposals?status=nope"}))
	v.check("GET", "/api/proposals/count", x.do(t, req{method: "GET", path: "/api/proposals/count"}))
	v.check("GET", "/api/proposals/{proposal_id}", x.do(t, req{method: "GET", path: "/api/proposals/" + p.ProposalID}))
	v.check("GET", "/api/proposals/{proposal_id}", x.do(t, req{method: "GET", path: "/api/proposals/" + bad.ProposalID}))
	v.check("GET", "/api/proposals/{proposal_id}", x.as(t, &x.member, req{method: "GET", path: "/api/proposals/" + p.ProposalID}))
	// A repository app: its proposal has no compile result (null), and the
	// launcher names its pinned version.
	repos, err := x.Server.Service.ListRepositories(context.Background(), x.agent, service.Page{})
	if err != nil || len(repos.Repositories) == 0 {
		t.Fatalf("repositories: %+v %v", repos, err)
	}
	repo := repos.Repositories[0]
	rp, err := x.Server.Service.ProposeRepoApp(context.Background(), x.agent, service.ProposeRepoArgs{RoomID: x.RoomID, Name: "Repository sample",
		RepositoryID: repo.ID, VersionID: repo.Versions[0].ID, IdempotencyKey: "repo-sample-0001"})
	if err != nil {
		t.Fatal(err)
	}
	detail := x.do(t, req{method: "GET", path: "/api/proposals/" + rp.ProposalID})
	if c, ok := detail.body["compile"]; !ok || c != nil {
		t.Fatalf("a repository proposal's compile = %v (present %v); want null", c, ok)
	}
	v.check("GET", "/api/proposals/{proposal_id}", detail)
	v.check("GET", "/api/proposals", x.do(t, req{method: "GET", path: "/api/proposals"}))
	v.check("POST", "/api/proposals/{proposal_id}/approve", x.do(t, req{method: "POST", path: "/api/proposals/" + rp.ProposalID + "/approve"}))
	v.check("GET", "/api/rooms/{room_id}", x.do(t, req{method: "GET", path: "/api/rooms/" + x.RoomID}))
	v.check("GET", "/api/proposals", x.do(t, req{method: "GET", path: "/api/proposals?status=approved"}))
	v.check("POST", "/api/proposals/{proposal_id}/approve", x.do(t, req{method: "POST", path: "/api/proposals/" + p.ProposalID + "/approve"}))
	v.check("POST", "/api/proposals/{proposal_id}/decline", x.do(t, req{method: "POST", path: "/api/proposals/" + p.ProposalID + "/decline"}))
	v.check("POST", "/api/proposals/{proposal_id}/decline", x.do(t, req{method: "POST", path: "/api/proposals/" + bad.ProposalID + "/decline"}))
	ver = x.room(t, x.RoomID).num("version")
	v.check("DELETE", "/api/rooms/{room_id}/apps/{instance_id}", x.do(t, req{method: "DELETE", path: app, header: ifMatch(ver)}))
	v.check("DELETE", "/api/rooms/{room_id}/apps/{instance_id}", x.do(t, req{method: "DELETE", path: app, header: ifMatch(ver + 1)}))
	made := x.do(t, req{method: "POST", path: "/api/rooms", body: map[string]any{"name": "Sampled room"}})
	v.check("POST", "/api/rooms", made)
	v.check("POST", "/api/rooms", x.do(t, req{method: "POST", path: "/api/rooms", body: map[string]any{"name": " "}}))
	sampled := "/api/rooms/" + made.body["room_id"].(string)
	v.check("PATCH", "/api/rooms/{room_id}", x.do(t, req{method: "PATCH", path: sampled, body: map[string]any{"name": "Sampled ✓"}, header: ifMatch(1)}))
	v.check("PATCH", "/api/rooms/{room_id}", x.do(t, req{method: "PATCH", path: sampled, body: map[string]any{"name": "Sampled ✓"}, header: ifMatch(1)}))
	v.check("DELETE", "/api/rooms/{room_id}", x.do(t, req{method: "DELETE", path: sampled}))
	v.check("DELETE", "/api/rooms/{room_id}", x.do(t, req{method: "DELETE", path: sampled, header: ifMatch(2)}))
	v.check("DELETE", "/api/rooms/{room_id}", x.do(t, req{method: "DELETE", path: sampled, header: ifMatch(3)}))
	// The count stream answers text/event-stream, as the document says.
	ch, stop := rmCounts(t, x)
	rmNextCount(t, ch)
	stop()
	v.checked["GET /api/proposals/events 200"] = true
}

func TestRoomsCreateRenameDelete(t *testing.T) {
	stores(t, func(t *testing.T, e *notesEnv) {
		x := rmStart(t, e)
		// Create: the person owns the Room; a blank name names the field.
		x.do(t, req{method: "POST", path: "/api/rooms", body: map[string]any{}}).want(t, "no name", http.StatusBadRequest, "")
		r := x.do(t, req{method: "POST", path: "/api/rooms", body: map[string]any{"name": "   "}})
		r.want(t, "blank name", http.StatusBadRequest, "")
		if r.body["field"] != "name" {
			t.Fatalf("blank name: %s", r.raw)
		}
		r = x.do(t, req{method: "POST", path: "/api/rooms", body: map[string]any{"name": "  Launch  "}})
		r.want(t, "create", http.StatusCreated, "")
		id, _ := r.body["room_id"].(string)
		if id == "" || r.body["name"] != "Launch" || r.body["can_manage"] != true || r.body["version"] != float64(1) ||
			r.body["owner"].(map[string]any)["name"] != e.Owner.User.Name || r.header.Get("Location") != "/api/rooms/"+id {
			t.Fatalf("create = %s (Location %q)", r.raw, r.header.Get("Location"))
		}
		path := "/api/rooms/" + id

		// Rename: guarded by the version, the Room's owner or a workspace owner.
		x.do(t, req{method: "PATCH", path: path, body: map[string]any{"name": "Plan"}}).want(t, "rename without If-Match", http.StatusPreconditionRequired, "precondition_required")
		x.do(t, req{method: "PATCH", path: path, body: map[string]any{"name": "Plan"}, header: ifMatch(2)}).want(t, "rename ahead", http.StatusPreconditionFailed, "version_conflict")
		x.as(t, &x.member, req{method: "PATCH", path: path, body: map[string]any{"name": "Mine"}, header: ifMatch(1)}).want(t, "member renames", http.StatusForbidden, service.NotReviewer)
		x.do(t, req{method: "PATCH", path: path, body: map[string]any{}, header: ifMatch(1)}).want(t, "rename, no name", http.StatusBadRequest, "")
		r = x.do(t, req{method: "PATCH", path: path, body: map[string]any{"name": "Launch plan"}, header: ifMatch(1)})
		r.want(t, "rename", http.StatusOK, "")
		if r.num("version") != 2 || r.header.Get("ETag") != `"2"` {
			t.Fatalf("rename = %s", r.raw)
		}
		if got := x.room(t, id); got.body["name"] != "Launch plan" {
			t.Fatalf("after rename: %s", got.raw)
		}
		// The member renames her own Room.
		x.as(t, &x.member, req{method: "PATCH", path: "/api/rooms/" + x.memberRoom, body: map[string]any{"name": "Ana's ✓"}, header: ifMatch(1)}).want(t, "member renames hers", http.StatusOK, "")

		// Delete: its app stops, its pending proposal is closed, it is gone.
		a := x.approved(t, id, "Alpha")
		p := x.propose(t, id, "Pending", rmFiles("p"))
		v := x.room(t, id).num("version")
		x.do(t, req{method: "DELETE", path: path}).want(t, "delete without If-Match", http.StatusPreconditionRequired, "precondition_required")
		x.as(t, &x.member, req{method: "DELETE", path: path, header: ifMatch(v)}).want(t, "member deletes", http.StatusForbidden, service.NotReviewer)
		x.do(t, req{method: "DELETE", path: path, header: ifMatch(v)}).want(t, "delete", http.StatusNoContent, "")
		for _, q := range []req{
			{method: "GET", path: path},
			{method: "PATCH", path: path, body: map[string]any{"name": "Again"}, header: ifMatch(v + 1)},
			{method: "DELETE", path: path, header: ifMatch(v + 1)},
			{method: "GET", path: path + "/apps/" + a.InstanceID + "/bundle"},
			{method: "PATCH", path: path + "/apps/" + a.InstanceID, body: map[string]any{"name": "A"}, header: ifMatch(v + 1)},
			{method: "DELETE", path: path + "/apps/" + a.InstanceID, header: ifMatch(v + 1)},
			{method: "POST", path: "/api/proposals/" + p.ProposalID + "/approve"},
		} {
			r := x.do(t, q)
			r.want(t, q.method+" "+q.path+" after delete", http.StatusNotFound, "not_found")
			if r.body["field"] != "room_id" {
				t.Fatalf("%s %s after delete: %s", q.method, q.path, r.raw)
			}
		}
		list := x.do(t, req{method: "GET", path: "/api/rooms"})
		for _, got := range rmIDs(list, "rooms", "room_id") {
			if got == id {
				t.Fatalf("the deleted Room is listed: %s", list.raw)
			}
		}
		if c := x.do(t, req{method: "GET", path: "/api/proposals/count"}); c.body["pending"] != float64(0) {
			t.Fatalf("count after delete: %s", c.raw)
		}
	})
}
