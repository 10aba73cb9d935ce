// Package room is the Room domain: the launcher of a cloud Room, the
// proposals agents make instead of apps, the safe-path rules and snippet
// limits, and the status an agent may read back. Everything here is a pure
// function over plain data (no I/O, no clock: callers pass now), so the same
// code serves the store, the tools, tests and simulations.
//
// The rule the package makes visible: nothing enters Doc.Apps except through
// Approve, which only a person calls. Proposals are pending until then.
package room

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"foundry/internal/problem"
)

// Kinds of app.
const (
	KindSnippet    = "snippet"
	KindRepository = "repository"
)

// Proposal statuses.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusDeclined = "declined"
)

// App states in the launcher, and the two extra states Status reports for
// instances that never made it there.
const (
	StateInLauncher    = "in_launcher"
	StateRemoved       = "removed"
	StatePendingReview = "pending_review"
	StateDeclined      = "declined"
)

// Build states. Snippets have no server build (the Room compiles them where
// the tab opens); repository apps run a pinned version.
const (
	BuildNone   = "none"
	BuildPinned = "pinned"
)

// TimeFormat is how timestamps are written: RFC 3339, UTC.
const TimeFormat = time.RFC3339

func stamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Doc is a cloud Room. Apps is the launcher in order, including removed apps
// (so their status can say "removed"); Launcher filters them.
type Doc struct {
	Name         string `json:"name"`
	Apps         []App  `json:"apps"`
	NextInstance int    `json:"next_instance"` // counter for instance IDs; never goes down
	// Proposals maps each reserved instance ID to the proposal that
	// reserved it (proposal IDs are random, so the status of an instance
	// finds its proposal here).
	Proposals map[string]string `json:"proposals,omitempty"`
}

// RecordProposal notes on d that proposalID reserved instanceID.
func RecordProposal(d *Doc, instanceID, proposalID string) {
	if d.Proposals == nil {
		d.Proposals = map[string]string{}
	}
	d.Proposals[instanceID] = proposalID
}

// ProposalOf returns the ID of the proposal that reserved instanceID, or ""
// when d does not know it.
func ProposalOf(d *Doc, instanceID string) string {
	return d.Proposals[instanceID]
}

// App is one instance in a Room's launcher.
type App struct {
	InstanceID   string `json:"instance_id"`
	Name         string `json:"name"`
	Kind         string `json:"kind"` // KindSnippet | KindRepository
	ProposalID   string `json:"proposal_id"`
	RepositoryID string `json:"repository_id,omitempty"`
	VersionID    string `json:"version_id,omitempty"`
	State        string `json:"state"` // StateInLauncher | StateRemoved
	AddedAt      string `json:"added_at"`
	Build        Build  `json:"build"`
}

// Build is the latest build state of an app.
type Build struct {
	State string `json:"state"` // BuildNone | BuildPinned
	At    string `json:"at,omitempty"`
}

// Proposal is what an agent creates instead of an app. It holds the full
// code (snippets) or the pinned version (repository apps) for the reviewer.
type Proposal struct {
	ID           string            `json:"proposal_id"`
	RoomID       string            `json:"room_id"`
	InstanceID   string            `json:"instance_id"`
	Name         string            `json:"name"`
	Kind         string            `json:"kind"`
	Files        map[string]string `json:"files,omitempty"`
	RepositoryID string            `json:"repository_id,omitempty"`
	VersionID    string            `json:"version_id,omitempty"`
	Status       string            `json:"status"` // StatusPending | StatusApproved | StatusDeclined
	ProposedBy   string            `json:"proposed_by"`
	CreatedAt    string            `json:"created_at"`
	DecidedAt    string            `json:"decided_at,omitempty"`
	DecidedBy    string            `json:"decided_by,omitempty"`
	// Compile is the result of compiling a snippet when it was proposed
	// (nil for repository apps, and for snippets proposed before Foundry
	// compiled them).
	Compile *Compile `json:"compile,omitempty"`
}

// New returns an empty Room.
func New(name string) Doc {
	return Doc{Name: name, Apps: []App{}, NextInstance: 1}
}

// ReserveInstance returns the next instance ID, "app-<n>", and advances the
// counter: an ID is given once and never reused, even if its proposal is
// declined or its app removed.
func ReserveInstance(d *Doc) string {
	if d.NextInstance < 1 {
		d.NextInstance = 1
	}
	for {
		id := "app-" + strconv.Itoa(d.NextInstance)
		d.NextInstance++
		if findApp(d, id) < 0 { // guards a counter restored from old data
			return id
		}
	}
}

// NewSnippetProposal checks a snippet (CheckSnippet) and returns it as a
// pending Proposal with the given ID, reserving its instance ID on d. On
// error d is untouched. Files are copied.
func NewSnippetProposal(d *Doc, id, roomID, name string, files map[string]string, by string, now time.Time) (Proposal, error) {
	if err := CheckSnippet(name, files); err != nil {
		return Proposal{}, err
	}
	return Proposal{
		ID:         id,
		RoomID:     roomID,
		InstanceID: ReserveInstance(d),
		Name:       strings.TrimSpace(name),
		Kind:       KindSnippet,
		Files:      maps.Clone(files),
		Status:     StatusPending,
		ProposedBy: by,
		CreatedAt:  stamp(now),
	}, nil
}

// NewRepoProposal checks the name and that repositoryID and versionID are
// given, and returns a pending Proposal, reserving its instance ID on d. That
// the version exists in the same workspace is the caller's check (FindVersion
// over what the store holds). On error d is untouched.
func NewRepoProposal(d *Doc, id, roomID, name, repositoryID, versionID, by string, now time.Time) (Proposal, error) {
	name, err := CheckName(name)
	if err != nil {
		return Proposal{}, err
	}
	if strings.TrimSpace(repositoryID) == "" {
		return Proposal{}, problem.New(problem.Invalid, "repository_id",
			"repository_id is empty: list the repositories to see them and their pinned versions")
	}
	if strings.TrimSpace(versionID) == "" {
		return Proposal{}, problem.New(problem.Invalid, "version_id",
			"version_id is empty: propose a pinned version of the repository")
	}
	return Proposal{
		ID:           id,
		RoomID:       roomID,
		InstanceID:   ReserveInstance(d),
		Name:         name,
		Kind:         KindRepository,
		RepositoryID: repositoryID,
		VersionID:    versionID,
		Status:       StatusPending,
		ProposedBy:   by,
		CreatedAt:    stamp(now),
	}, nil
}

// Approve is the person's "Approve and create": only a pending proposal may
// be approved. It marks p approved and appends its app to the launcher
// (snippets with build state "none", repository apps "pinned"). On error
// neither d nor p changes.
func Approve(d *Doc, p *Proposal, by string, now time.Time) error {
	if err := mustBePending(p, "approved"); err != nil {
		return err
	}
	build := Build{State: BuildNone}
	switch p.Kind {
	case KindSnippet:
	case KindRepository:
		build = Build{State: BuildPinned, At: stamp(now)}
	default:
		return fmt.Errorf("room: proposal %s has unknown kind %q", p.ID, p.Kind)
	}
	if findApp(d, p.InstanceID) >= 0 {
		return problem.New(problem.Invalid, "instance_id",
			"instance '%s' is already in this Room's launcher", p.InstanceID)
	}
	d.Apps = append(d.Apps, App{
		InstanceID:   p.InstanceID,
		Name:         p.Name,
		Kind:         p.Kind,
		ProposalID:   p.ID,
		RepositoryID: p.RepositoryID,
		VersionID:    p.VersionID,
		State:        StateInLauncher,
		AddedAt:      stamp(now),
		Build:        build,
	})
	p.Status, p.DecidedAt, p.DecidedBy = StatusApproved, stamp(now), by
	return nil
}

// Decline is the person's "Decline": only a pending proposal may be
// declined. It never touches the Room.
func Decline(p *Proposal, by string, now time.Time) error {
	if err := mustBePending(p, "declined"); err != nil {
		return err
	}
	p.Status, p.DecidedAt, p.DecidedBy = StatusDeclined, stamp(now), by
	return nil
}

func mustBePending(p *Proposal, verb string) error {
	if p.Status != StatusPending {
		return problem.New(problem.Invalid, "proposal_id",
			"proposal '%s' is %s; only a pending proposal can be %s", p.ID, p.Status, verb)
	}
	return nil
}

// RemoveApp is a person's act: the app leaves the launcher. It stays in
// d.Apps with state "removed", so its status can say so; its instance ID is
// never given again.
func RemoveApp(d *Doc, instanceID string) error {
	i := findApp(d, instanceID)
	if i < 0 {
		return notFound(instanceID)
	}
	if d.Apps[i].State == StateRemoved {
		return problem.New(problem.Invalid, "instance_id", "app '%s' is already removed", instanceID)
	}
	d.Apps[i].State = StateRemoved
	return nil
}

// Launcher returns the apps in the launcher, in order.
func Launcher(d *Doc) []App {
	out := []App{}
	for _, a := range d.Apps {
		if a.State == StateInLauncher {
			out = append(out, a)
		}
	}
	return out
}

// Status is what read_room_app_status may say about an instance: its safe
// launcher state (StatePendingReview, StateDeclined, StateInLauncher,
// StateRemoved) and its latest build, nothing else. p is the proposal that
// reserved the instance, or nil when none is known. The launcher wins over
// p. It returns NotFound when neither knows the instance.
func Status(d *Doc, p *Proposal, instanceID string) (state string, build Build, err error) {
	if i := findApp(d, instanceID); i >= 0 {
		a := d.Apps[i]
		return a.State, a.Build, nil
	}
	if p == nil || p.InstanceID != instanceID {
		return "", Build{}, notFound(instanceID)
	}
	switch p.Status {
	case StatusPending:
		return StatePendingReview, Build{State: BuildNone}, nil
	case StatusDeclined:
		return StateDeclined, Build{State: BuildNone}, nil
	}
	// Approved (or unknown) yet not in the launcher: the store lost a write.
	return "", Build{}, fmt.Errorf("room: proposal %s for %s is %q but the instance is not in the launcher", p.ID, instanceID, p.Status)
}

func notFound(instanceID string) error {
	return problem.New(problem.NotFound, "instance_id",
		"no app instance '%s' in this Room; list the Room's apps to see the launcher (a proposal's instance_id is returned when it is made)", instanceID)
}

func findApp(d *Doc, instanceID string) int {
	for i := range d.Apps {
		if d.Apps[i].InstanceID == instanceID {
			return i
		}
	}
	return -1
}
