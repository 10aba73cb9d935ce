package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"foundry/internal/auth"
	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/store"
)

func (s *Service) repository(ctx context.Context, ws, id string) (room.Repository, error) {
	o, err := s.Store.GetObject(ctx, store.KindRepository, id)
	if err != nil || o.Workspace != ws {
		if err != nil && err != store.ErrNotFound {
			return room.Repository{}, err
		}
		return room.Repository{}, problem.New(problem.NotFound, "repository_id", "repository %q was not found; list_repositories shows them", id)
	}
	var r room.Repository
	return r, json.Unmarshal(o.Doc, &r)
}

// PushRepo pins the files as a new immutable version of the repository
// named name (created on first push) and returns both IDs.
func (s *Service) PushRepo(ctx context.Context, ws, user, name string, files map[string][]byte) (repoID, versionID string, err error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", "", problem.New(problem.Invalid, "name", "a repository needs a name")
	}
	var repo room.Repository
	objs, err := s.Store.ListObjects(ctx, store.ObjectQuery{Workspace: ws, Kind: store.KindRepository, Limit: 10000})
	if err != nil {
		return "", "", err
	}
	for _, o := range objs {
		var r room.Repository
		if json.Unmarshal(o.Doc, &r) == nil && r.Name == name {
			repo = r
		}
	}
	now := s.Now()
	if repo.ID == "" {
		repo = room.Repository{ID: store.NewID("repo"), Name: name, Versions: []room.Version{}, CreatedAt: now.UTC().Format(room.TimeFormat)}
	}
	v, err := room.NewVersion(store.NewID("ver"), files, "user:"+user, now)
	if err != nil {
		return "", "", err
	}
	repo.Versions = append(repo.Versions, v)
	enc := make(map[string]string, len(files))
	for p, b := range files {
		enc[p] = base64.StdEncoding.EncodeToString(b)
	}
	err = s.Store.PutObjects(ctx,
		store.Object{Workspace: ws, Kind: store.KindRepoVersion, ID: v.ID, Parent: repo.ID, Doc: mustJSON(map[string]any{"files": enc})},
		store.Object{Workspace: ws, Kind: store.KindRepository, ID: repo.ID, Doc: mustJSON(repo)},
	)
	return repo.ID, v.ID, err
}

// ListRepositories: repositories and their pinned versions (metadata only).
func (s *Service) ListRepositories(ctx context.Context, p auth.Principal, cursor string, limit int) (map[string]any, error) {
	limit, err := pageLimit(limit)
	if err != nil {
		return nil, err
	}
	after, err := decodeCursor(cursor, "repo")
	if err != nil {
		return nil, err
	}
	objs, err := s.Store.ListObjects(ctx, store.ObjectQuery{Workspace: p.Workspace, Kind: store.KindRepository, AfterID: after, Limit: limit + 1})
	if err != nil {
		return nil, err
	}
	out := []room.Repository{}
	for i, o := range objs {
		if i == limit {
			break
		}
		var r room.Repository
		if err := json.Unmarshal(o.Doc, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	res := map[string]any{"repositories": out}
	if len(objs) > limit {
		res["next_cursor"] = encodeCursor("repo", objs[limit-1].ID)
	}
	return res, nil
}
