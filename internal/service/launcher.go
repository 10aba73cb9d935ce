package service

import (
	"context"
	"errors"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/snippet"
	"foundry/internal/store"
)

// A Room's launcher, curated by a person who manages the Room: an app
// renamed, moved or removed, each a guarded write on the Room based on the
// version the person saw; and the compiled code of an approved snippet,
// which any person of the workspace runs.

// EditAppArgs rename a launcher app and/or move it to a 0-based position
// among the launcher's apps.
type EditAppArgs struct {
	RoomID     string  `json:"room_id"`
	InstanceID string  `json:"instance_id"`
	Name       *string `json:"name,omitempty"`
	Position   *int    `json:"position,omitempty"`
	Guard
}

// RoomWritten is what a launcher edit answers.
type RoomWritten struct {
	RoomID  string `json:"room_id"`
	Version int64  `json:"version"`
}

// EditApp renames and/or moves a launcher app.
func (s *Service) EditApp(ctx context.Context, c Caller, a EditAppArgs) (RoomWritten, error) {
	if a.Name == nil && a.Position == nil {
		return RoomWritten{}, problem.New(problem.Invalid, "name", "give name, position or both: there is nothing to change")
	}
	if a.Name != nil {
		if _, err := room.CheckName(*a.Name); err != nil {
			return RoomWritten{}, err
		}
	}
	kind := "app_renamed"
	if a.Name == nil {
		kind = "app_moved"
	}
	return s.launcherWrite(ctx, c, a.RoomID, a.InstanceID, a.Guard, kind, "rename or reorder its apps", struct {
		Op, Instance string
		Name         *string
		Position     *int
	}{"edit_app", a.InstanceID, a.Name, a.Position}, func(d *room.Doc) error {
		if a.Name != nil {
			if err := room.RenameApp(d, a.InstanceID, *a.Name); err != nil {
				return err
			}
		}
		if a.Position != nil {
			return room.MoveApp(d, a.InstanceID, *a.Position)
		}
		return nil
	})
}

// AppWriteArgs name one app of one Room, with the guard of a write.
type AppWriteArgs struct {
	RoomID     string `json:"room_id"`
	InstanceID string `json:"instance_id"`
	Guard
}

// RemoveApp takes an app out of the launcher (room.RemoveApp).
func (s *Service) RemoveApp(ctx context.Context, c Caller, a AppWriteArgs) (RoomWritten, error) {
	return s.launcherWrite(ctx, c, a.RoomID, a.InstanceID, a.Guard, "app_removed", "remove its apps", struct{ Op, Instance string }{"remove_app", a.InstanceID}, func(d *room.Doc) error {
		if _, err := room.AppIn(d, a.InstanceID); err != nil {
			return err
		}
		return room.RemoveApp(d, a.InstanceID)
	})
}

// launcherWrite is a change of one app of the launcher: a managing write
// of the Room (roomWrite) that names the app.
func (s *Service) launcherWrite(ctx context.Context, c Caller, roomID, instanceID string, g Guard, kind, what string, meaning any, edit func(d *room.Doc) error) (RoomWritten, error) {
	if err := c.personOnly("managing a Room's launcher"); err != nil {
		return RoomWritten{}, err
	}
	if err := CheckID("room_id", roomID); err != nil {
		return RoomWritten{}, err
	}
	if err := CheckID("instance_id", instanceID); err != nil {
		return RoomWritten{}, err
	}
	op := roomOp{act: "managing a Room's launcher", what: what, kind: kind, meaning: meaning, changed: []string{instanceID}}
	return s.roomWrite(ctx, c, roomID, g, op, func(_ *store.Resource, _ store.TxReader, d *room.Doc, _ *store.Change) error {
		return edit(d)
	})
}

// Bundle is the compiled code of an approved snippet app in the launcher
// of Room roomID, for any person of the workspace. Nothing else has a
// bundle: a pending or declined proposal, a removed app and a repository
// app are not found.
func (s *Service) Bundle(ctx context.Context, c Caller, a AppArgs) (snippet.Result, error) {
	if err := c.personOnly("running a Room's app"); err != nil {
		return snippet.Result{}, err
	}
	if err := CheckID("instance_id", a.InstanceID); err != nil {
		return snippet.Result{}, err
	}
	_, d, err := s.roomFor(ctx, c, a.RoomID)
	if err != nil {
		return snippet.Result{}, err
	}
	app, err := room.AppIn(&d, a.InstanceID)
	if err != nil {
		return snippet.Result{}, err
	}
	if app.Kind != room.KindSnippet {
		return snippet.Result{}, problem.New(problem.NotFound, "instance_id", "app '%s' runs a pinned repository version: it has no compiled bundle", a.InstanceID)
	}
	p, err := s.proposal(ctx, c.Workspace, app.ProposalID)
	if err != nil || p.Status != room.StatusApproved || p.RoomID != a.RoomID || p.InstanceID != a.InstanceID || p.Kind != room.KindSnippet {
		var pr *problem.Problem
		if err != nil && !(errors.As(err, &pr) && pr.Code == problem.NotFound) {
			return snippet.Result{}, err
		}
		return snippet.Result{}, problem.New(problem.NotFound, "instance_id", "app '%s' has no approved snippet to run", a.InstanceID)
	}
	// Compiled again from the approved files: deterministic, and cached by
	// their hash, so this is the result the reviewer saw.
	return snippet.Compile(p.Files), nil
}
