package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
	if g.ExpectedVersion < 0 || (g.ExpectedVersion == 0 && !c.versionFree()) {
		return RoomWritten{}, problem.New(PreconditionRequired, "expected_version", "a change of the launcher must say which version of the Room it was based on (the version a read answered, ≥ 1)")
	}
	if g.IdempotencyKey != "" {
		if err := checkKey(g.IdempotencyKey); err != nil {
			return RoomWritten{}, err
		}
	}
	m := store.Mutation{
		Workspace: c.Workspace, Type: store.TypeRoom, ID: roomID, ExpectedVersion: g.ExpectedVersion, Actor: c.actor(),
		Key: g.IdempotencyKey, KeyScope: c.keyScope(), Fingerprint: c.fingerprintOf(meaning),
		Access: func(cur *store.Resource) error {
			if !c.reachesRoom(cur) {
				return notFound(store.TypeRoom, roomID)
			}
			if !c.managesRoom(cur) {
				return notRoomManager(what)
			}
			return nil
		},
		Apply: func(cur *store.Resource) (*store.Change, error) {
			var d room.Doc
			if err := json.Unmarshal(cur.Doc, &d); err != nil {
				return nil, fmt.Errorf("room %s: %w", roomID, err)
			}
			if err := edit(&d); err != nil {
				return nil, err
			}
			return &store.Change{Doc: mustJSON(d), Kind: kind, Changed: []string{instanceID},
				Result: mustJSON(RoomWritten{RoomID: roomID, Version: cur.Version + 1})}, nil
		},
	}
	out, err := s.guardedWrite(ctx, m)
	if err != nil {
		return RoomWritten{}, storeProblem(err, m)
	}
	return RoomWritten{RoomID: roomID, Version: out.Version}, nil
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
