package room

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"foundry/internal/problem"
)

var (
	t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	t1 = t0.Add(6 * time.Minute)
)

func seedFiles() map[string]string {
	return map[string]string{"src/App.tsx": appTSX, "src/styles.css": "body{margin:0}\n"}
}

func newSnippet(t *testing.T, d *Doc, id string) Proposal {
	t.Helper()
	p, err := NewSnippetProposal(d, id, "room-1", "  Standup timer  ", seedFiles(), "agent:claude-code", t0)
	if err != nil {
		t.Fatalf("NewSnippetProposal: %v", err)
	}
	return p
}

func TestNewSnippetProposal_IsPendingWithReservedInstance(t *testing.T) {
	d := New("Team room")
	p := newSnippet(t, &d, "prop-1")
	want := Proposal{
		ID: "prop-1", RoomID: "room-1", InstanceID: "app-1", Name: "Standup timer", Kind: KindSnippet,
		Files: seedFiles(), Status: StatusPending, ProposedBy: "agent:claude-code", CreatedAt: "2026-03-01T09:00:00Z",
	}
	if !equalJSON(t, p, want) {
		t.Fatalf("proposal\n got %+v\nwant %+v", p, want)
	}
	if len(Launcher(&d)) != 0 || len(d.Apps) != 0 {
		t.Fatalf("a proposal put something in the launcher: %+v", d.Apps)
	}
}

func TestNewSnippetProposal_CopiesFiles(t *testing.T) {
	d := New("r")
	files := seedFiles()
	p, err := NewSnippetProposal(&d, "prop-1", "room-1", "x", files, "a", t0)
	if err != nil {
		t.Fatal(err)
	}
	files["src/App.tsx"] = "changed after review"
	if p.Files["src/App.tsx"] != appTSX {
		t.Fatal("proposal aliases the caller's map: reviewed code could change under the reviewer")
	}
}

func TestNewProposal_RefusedDoesNotReserveInstance(t *testing.T) {
	d := New("r")
	if _, err := NewSnippetProposal(&d, "p1", "room-1", "x", map[string]string{"src/main.tsx": ""}, "a", t0); err == nil {
		t.Fatal("accepted a snippet without src/App.tsx")
	}
	if _, err := NewRepoProposal(&d, "p2", "room-1", "x", "repo-1", "", "a", t0); err == nil {
		t.Fatal("accepted a repo proposal without version_id")
	}
	if d.NextInstance != 1 {
		t.Fatalf("refused proposals advanced the counter to %d", d.NextInstance)
	}
	if p := newSnippet(t, &d, "p3"); p.InstanceID != "app-1" {
		t.Fatalf("first accepted proposal got %s, want app-1", p.InstanceID)
	}
}

func TestNewRepoProposal_Rules(t *testing.T) {
	tests := []struct {
		name, appName, repo, version string
		wantField                    string // "" means accepted
	}{
		{"accepted with repository and version", "Dashboard", "repo-1", "ver-3", ""},
		{"empty repository_id is refused", "Dashboard", "", "ver-3", "repository_id"},
		{"blank version_id is refused", "Dashboard", "repo-1", "  ", "version_id"},
		{"empty name is refused", "", "repo-1", "ver-3", "name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New("r")
			p, err := NewRepoProposal(&d, "prop-9", "room-1", tc.appName, tc.repo, tc.version, "agent", t0)
			if tc.wantField != "" {
				wantProblem(t, err, problem.Invalid, tc.wantField)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != KindRepository || p.Status != StatusPending || p.InstanceID != "app-1" ||
				p.RepositoryID != tc.repo || p.VersionID != tc.version || p.Files != nil {
				t.Fatalf("proposal %+v", p)
			}
		})
	}
}

func TestReserveInstance_NeverReusesAnID(t *testing.T) {
	d := New("r")
	seen := map[string]bool{}
	for i := 1; i <= 5; i++ {
		id := ReserveInstance(&d)
		if want := "app-" + string(rune('0'+i)); id != want {
			t.Fatalf("reservation %d = %s, want %s", i, id, want)
		}
		seen[id] = true
	}
	// A counter that went back (old data) must still not hand out a live ID.
	d.Apps = append(d.Apps, App{InstanceID: "app-6", State: StateRemoved})
	d.NextInstance = 6
	if id := ReserveInstance(&d); id != "app-7" {
		t.Fatalf("got %s, want app-7 (app-6 exists)", id)
	}
	var zero Doc
	if id := ReserveInstance(&zero); id != "app-1" {
		t.Fatalf("zero Doc gave %s, want app-1", id)
	}
}

func TestApprove_AddsToLauncher(t *testing.T) {
	tests := []struct {
		name      string
		propose   func(d *Doc) (Proposal, error)
		wantBuild Build
	}{
		{
			name: "snippet enters with build none",
			propose: func(d *Doc) (Proposal, error) {
				return NewSnippetProposal(d, "prop-1", "room-1", "Timer", seedFiles(), "agent", t0)
			},
			wantBuild: Build{State: BuildNone},
		},
		{
			name: "repository app enters pinned",
			propose: func(d *Doc) (Proposal, error) {
				return NewRepoProposal(d, "prop-1", "room-1", "Dashboard", "repo-1", "ver-2", "agent", t0)
			},
			wantBuild: Build{State: BuildPinned, At: "2026-03-01T09:06:00Z"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New("r")
			p, err := tc.propose(&d)
			if err != nil {
				t.Fatal(err)
			}
			if err := Approve(&d, &p, "user:ana", t1); err != nil {
				t.Fatalf("Approve: %v", err)
			}
			if p.Status != StatusApproved || p.DecidedBy != "user:ana" || p.DecidedAt != "2026-03-01T09:06:00Z" {
				t.Fatalf("proposal after approve: %+v", p)
			}
			l := Launcher(&d)
			if len(l) != 1 {
				t.Fatalf("launcher has %d apps, want 1", len(l))
			}
			a := l[0]
			if a.InstanceID != p.InstanceID || a.ProposalID != "prop-1" || a.Kind != p.Kind || a.Name != p.Name ||
				a.State != StateInLauncher || a.AddedAt != "2026-03-01T09:06:00Z" || a.Build != tc.wantBuild ||
				a.RepositoryID != p.RepositoryID || a.VersionID != p.VersionID {
				t.Fatalf("app %+v", a)
			}
		})
	}
}

func TestApprove_KeepsLauncherOrder(t *testing.T) {
	d := New("r")
	a, b, c := newSnippet(t, &d, "p1"), newSnippet(t, &d, "p2"), newSnippet(t, &d, "p3")
	for _, p := range []*Proposal{&c, &a, &b} {
		if err := Approve(&d, p, "u", t1); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveApp(&d, a.InstanceID); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range Launcher(&d) {
		got = append(got, x.InstanceID)
	}
	if strings.Join(got, ",") != "app-3,app-2" {
		t.Fatalf("launcher = %v, want approval order without the removed app", got)
	}
}

func TestDecisions_OnlyFromPending(t *testing.T) {
	tests := []struct {
		name     string
		first    func(d *Doc, p *Proposal) error
		second   func(d *Doc, p *Proposal) error
		wantMsg  string
		wantApps int
	}{
		{"double approve is refused", approve, approve, "is approved; only a pending proposal can be approved", 1},
		{"decline after approve is refused", approve, decline, "is approved; only a pending proposal can be declined", 1},
		{"approve after decline is refused", decline, approve, "is declined; only a pending proposal can be approved", 0},
		{"double decline is refused", decline, decline, "is declined; only a pending proposal can be declined", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New("r")
			p := newSnippet(t, &d, "prop-1")
			if err := tc.first(&d, &p); err != nil {
				t.Fatal(err)
			}
			before := p
			err := tc.second(&d, &p)
			wantProblem(t, err, problem.Invalid, "proposal_id", "proposal 'prop-1'", tc.wantMsg)
			if len(d.Apps) != tc.wantApps {
				t.Fatalf("d.Apps has %d apps, want %d", len(d.Apps), tc.wantApps)
			}
			if p.Status != before.Status || p.DecidedAt != before.DecidedAt || p.DecidedBy != before.DecidedBy {
				t.Fatalf("refused decision changed the proposal: %+v", p)
			}
		})
	}
}

func approve(d *Doc, p *Proposal) error { return Approve(d, p, "user:ana", t1) }
func decline(_ *Doc, p *Proposal) error { return Decline(p, "user:ana", t1) }

func TestDecline_NeverTouchesTheRoom(t *testing.T) {
	d := New("r")
	p := newSnippet(t, &d, "prop-1")
	before, _ := json.Marshal(d)
	if err := Decline(&p, "user:ana", t1); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(d)
	if string(before) != string(after) {
		t.Fatalf("Decline changed the room:\n%s\n%s", before, after)
	}
	if p.Status != StatusDeclined || p.DecidedBy != "user:ana" || p.DecidedAt == "" {
		t.Fatalf("proposal after decline: %+v", p)
	}
	if len(Launcher(&d)) != 0 {
		t.Fatal("declined app is in the launcher")
	}
}

func TestApprove_RefusesAnInstanceAlreadyInTheLauncher(t *testing.T) {
	d := New("r")
	p := newSnippet(t, &d, "prop-1")
	copyOfP := p // e.g. the same proposal loaded twice
	if err := Approve(&d, &p, "u", t1); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, Approve(&d, &copyOfP, "u", t1), problem.Invalid, "instance_id", "already in this Room's launcher")
	if len(d.Apps) != 1 || copyOfP.Status != StatusPending {
		t.Fatalf("refused approve changed state: apps=%d status=%s", len(d.Apps), copyOfP.Status)
	}
}

func TestStatus_Transitions(t *testing.T) {
	type step struct {
		act       func(d *Doc, p *Proposal) error
		wantState string
		wantBuild Build
	}
	remove := func(d *Doc, p *Proposal) error { return RemoveApp(d, p.InstanceID) }
	none := Build{State: BuildNone}
	tests := []struct {
		name  string
		steps []step
	}{
		{"pending_review then in_launcher then removed", []step{
			{nil, StatePendingReview, none},
			{approve, StateInLauncher, none},
			{remove, StateRemoved, none},
		}},
		{"pending_review then declined", []step{
			{nil, StatePendingReview, none},
			{decline, StateDeclined, none},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New("r")
			p := newSnippet(t, &d, "prop-1")
			for i, s := range tc.steps {
				if s.act != nil {
					if err := s.act(&d, &p); err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
				}
				state, build, err := Status(&d, &p, p.InstanceID)
				if err != nil || state != s.wantState || build != s.wantBuild {
					t.Fatalf("step %d: Status = %q %+v %v, want %q %+v", i, state, build, err, s.wantState, s.wantBuild)
				}
			}
		})
	}
}

func TestStatus_FromLauncherWithoutProposal(t *testing.T) {
	d := New("r")
	p, err := NewRepoProposal(&d, "prop-1", "room-1", "Dash", "repo-1", "ver-1", "agent", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Approve(&d, &p, "u", t1); err != nil {
		t.Fatal(err)
	}
	state, build, err := Status(&d, nil, "app-1")
	if err != nil || state != StateInLauncher || build.State != BuildPinned {
		t.Fatalf("Status = %q %+v %v", state, build, err)
	}
}

func TestStatus_UnknownInstanceIsNotFound(t *testing.T) {
	d := New("r")
	p := newSnippet(t, &d, "prop-1")
	for _, tc := range []struct {
		name string
		p    *Proposal
		id   string
	}{
		{"no proposal", nil, "app-1"},
		{"proposal of another instance", &p, "app-42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Status(&d, tc.p, tc.id)
			wantProblem(t, err, problem.NotFound, "instance_id", "'"+tc.id+"'", "list the Room's apps to see the launcher")
		})
	}
}

func TestRemoveApp(t *testing.T) {
	d := New("r")
	p := newSnippet(t, &d, "prop-1")
	wantProblem(t, RemoveApp(&d, p.InstanceID), problem.NotFound, "instance_id") // pending: not in the launcher
	if err := Approve(&d, &p, "u", t1); err != nil {
		t.Fatal(err)
	}
	if err := RemoveApp(&d, p.InstanceID); err != nil {
		t.Fatal(err)
	}
	if len(d.Apps) != 1 || d.Apps[0].State != StateRemoved {
		t.Fatalf("removed app should stay in Apps as removed: %+v", d.Apps)
	}
	wantProblem(t, RemoveApp(&d, p.InstanceID), problem.Invalid, "instance_id", "already removed")
	if q := newSnippet(t, &d, "prop-2"); q.InstanceID == p.InstanceID {
		t.Fatal("a removed app's instance ID was given again")
	}
}

func TestLauncher_OfEmptyRoomIsEmptyNotNil(t *testing.T) {
	d := New("r")
	b, _ := json.Marshal(Launcher(&d))
	if string(b) != "[]" {
		t.Fatalf("Launcher of a new room marshals to %s, want []", b)
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(x) == string(y)
}
