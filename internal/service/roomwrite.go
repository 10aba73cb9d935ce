package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/store"
)

// A Room managed by a person: renamed, or deleted with its launcher. Both
// are guarded writes on the Room based on the version the person saw, by
// its owner or a workspace owner, like every change of its launcher.
//
// A deleted Room keeps its row and history, marked by an object of kind
// store.KindRoomDeleted written in the same transaction that takes every
// app out of its launcher and declines its pending proposals. From then on
// every read and write of the Room answers not found naming room_id.

// roomGone is not found for Room id once it is deleted.
func (s *Service) roomGone(ctx context.Context, id string) error {
	_, err := s.Store.GetObject(ctx, store.KindRoomDeleted, id)
	return goneAnswer(id, err)
}

// roomGoneTx is roomGone inside a guarded write's transaction.
func roomGoneTx(tx store.TxReader, id string) error {
	_, err := tx.GetObject(store.KindRoomDeleted, id)
	return goneAnswer(id, err)
}

func goneAnswer(id string, err error) error {
	switch {
	case err == nil:
		return notFound(store.TypeRoom, id)
	case errors.Is(err, store.ErrNotFound):
		return nil
	}
	return err
}

// roomOp is what one managing write of a Room is: the words of its
// refusals, its event kind and what it means (for its key).
type roomOp struct {
	act     string // a person's act, for an agent's refusal: "renaming a Room"
	what    string // what only a manager may do: "rename it"
	kind    string // event kind
	meaning any
	changed []string // sub-IDs touched (instance IDs)
}

// roomWrite is one guarded write on Room roomID by a person who manages
// it. edit changes d (and may add to ch) inside the transaction, reading
// other rows through tx only; it runs on a Room that is not deleted.
func (s *Service) roomWrite(ctx context.Context, c Caller, roomID string, g Guard, op roomOp, edit func(cur *store.Resource, tx store.TxReader, d *room.Doc, ch *store.Change) error) (RoomWritten, error) {
	if err := c.personOnly(op.act); err != nil {
		return RoomWritten{}, err
	}
	if err := CheckID("room_id", roomID); err != nil {
		return RoomWritten{}, err
	}
	if g.ExpectedVersion < 0 || (g.ExpectedVersion == 0 && !c.versionFree()) {
		return RoomWritten{}, problem.New(PreconditionRequired, "expected_version", "a change of a Room must say which version of the Room it was based on (the version a read answered, ≥ 1)")
	}
	if g.IdempotencyKey != "" {
		if err := checkKey(g.IdempotencyKey); err != nil {
			return RoomWritten{}, err
		}
	}
	m := store.Mutation{
		Workspace: c.Workspace, Type: store.TypeRoom, ID: roomID, ExpectedVersion: g.ExpectedVersion, Actor: c.actor(),
		Key: g.IdempotencyKey, KeyScope: c.keyScope(), Fingerprint: c.fingerprintOf(op.meaning),
		Access: func(cur *store.Resource) error {
			if !c.reachesRoom(cur) {
				return notFound(store.TypeRoom, roomID)
			}
			if !c.managesRoom(cur) {
				return notRoomManager(op.what)
			}
			return nil
		},
		ApplyTx: func(cur *store.Resource, tx store.TxReader) (*store.Change, error) {
			if err := roomGoneTx(tx, roomID); err != nil {
				return nil, err
			}
			var d room.Doc
			if err := json.Unmarshal(cur.Doc, &d); err != nil {
				return nil, fmt.Errorf("room %s: %w", roomID, err)
			}
			ch := &store.Change{Kind: op.kind, Changed: op.changed}
			if err := edit(cur, tx, &d, ch); err != nil {
				return nil, err
			}
			ch.Doc = mustJSON(d)
			ch.Result = mustJSON(RoomWritten{RoomID: roomID, Version: cur.Version + 1})
			return ch, nil
		},
	}
	out, err := s.guardedWrite(ctx, m)
	if err != nil {
		return RoomWritten{}, storeProblem(err, m)
	}
	return RoomWritten{RoomID: roomID, Version: out.Version}, nil
}

// RoomRenameArgs rename a Room.
type RoomRenameArgs struct {
	RoomID string `json:"room_id"`
	Name   string `json:"name"`
	Guard
}

// RenameRoom gives a Room a new name (room.CheckRoomName applies).
func (s *Service) RenameRoom(ctx context.Context, c Caller, a RoomRenameArgs) (RoomWritten, error) {
	name, err := room.CheckRoomName(a.Name)
	if err != nil {
		return RoomWritten{}, err
	}
	op := roomOp{act: "renaming a Room", what: "rename it", kind: "room_renamed", meaning: struct{ Op, Name string }{"rename_room", name}}
	return s.roomWrite(ctx, c, a.RoomID, a.Guard, op, func(_ *store.Resource, _ store.TxReader, d *room.Doc, ch *store.Change) error {
		d.Name = name
		ch.Title = &name
		return nil
	})
}

// RoomArgs name one Room, with the guard of a write on it.
type RoomArgs struct {
	RoomID string `json:"room_id"`
	Guard
}

// DeleteRoom deletes a Room in one guarded write: every app leaves its
// launcher (no one runs them again), every pending proposal of it is
// declined by the person who deleted it, and the Room is marked deleted.
func (s *Service) DeleteRoom(ctx context.Context, c Caller, a RoomArgs) (RoomWritten, error) {
	now := s.Now()
	op := roomOp{act: "deleting a Room", what: "delete it", kind: store.KindRoomDeleted, meaning: struct{ Op string }{"delete_room"}}
	return s.roomWrite(ctx, c, a.RoomID, a.Guard, op, func(cur *store.Resource, tx store.TxReader, d *room.Doc, ch *store.Change) error {
		ch.Changed = []string{}
		for _, app := range room.Launcher(d) {
			if err := room.RemoveApp(d, app.InstanceID); err != nil {
				return err
			}
			ch.Changed = append(ch.Changed, app.InstanceID)
		}
		instances := make([]string, 0, len(d.Proposals))
		for inst := range d.Proposals {
			instances = append(instances, inst)
		}
		sort.Strings(instances) // one order, however often the store runs this
		for _, inst := range instances {
			o, err := tx.GetObject(store.KindProposal, d.Proposals[inst])
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			var pr room.Proposal
			if err := json.Unmarshal(o.Doc, &pr); err != nil {
				return fmt.Errorf("proposal %s: %w", o.ID, err)
			}
			if pr.Status != room.StatusPending || pr.RoomID != cur.ID {
				continue
			}
			if err := room.Decline(&pr, c.actor(), now); err != nil {
				return err
			}
			ch.Objects = append(ch.Objects, store.Object{Workspace: cur.Workspace, Kind: store.KindProposal, ID: pr.ID, Parent: cur.ID, Doc: mustJSON(pr)})
		}
		ch.Objects = append(ch.Objects, store.Object{Workspace: cur.Workspace, Kind: store.KindRoomDeleted, ID: cur.ID, Parent: cur.ID,
			Doc: mustJSON(map[string]any{"by": c.actor(), "version": cur.Version + 1})})
		return nil
	})
}
