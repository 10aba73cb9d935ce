package service

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"foundry/internal/problem"
	"foundry/internal/room"
	"foundry/internal/store"
)

func (s *Service) repository(ctx context.Context, ws, id string) (room.Repository, error) {
	r, err := s.Store.Get(ctx, store.TypeRepository, id)
	if err != nil || r.Workspace != ws {
		if err != nil && err != store.ErrNotFound {
			return room.Repository{}, err
		}
		return room.Repository{}, problem.New(problem.NotFound, "repository_id", "repository %q was not found in this workspace", problem.Excerpt(id))
	}
	var repo room.Repository
	return repo, json.Unmarshal(r.Doc, &repo)
}

// repositoryID is the ID of the repository named name in workspace ws: one
// name, one ID, so concurrent first pushes of a name create one repository
// between them (they serialize on its row).
func repositoryID(ws, name string) string {
	sum := sha256.Sum256([]byte("repository\x00" + ws + "\x00" + name))
	return "repo_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
}

// repositoryNamed returns the ID of the repository named name: one created
// before IDs were derived from names keeps its own ID, any other is
// repositoryID. Repositories of that kind are never created again, so the
// answer for a name cannot change.
func (s *Service) repositoryNamed(ctx context.Context, ws, name string) (string, error) {
	derived := repositoryID(ws, name)
	after := ""
	for {
		rows, err := s.Store.List(ctx, store.ListQuery{Workspace: ws, Type: store.TypeRepository, AfterID: after, Limit: 500})
		if err != nil {
			return "", err
		}
		for _, r := range rows {
			if r.Title == name && r.ID != derived {
				return r.ID, nil
			}
		}
		if len(rows) < 500 {
			return derived, nil
		}
		after = rows[len(rows)-1].ID
	}
}

// PushRepo pins the files as a new immutable version of the repository
// named name (created on first push) and returns both IDs. It is one
// guarded write on the repository: the version is appended under its row
// lock and its files are stored in the same transaction, so concurrent
// pushes each add their own version and none is lost.
func (s *Service) PushRepo(ctx context.Context, c Caller, name string, files map[string][]byte) (repoID, versionID string, err error) {
	if err := c.personOnly("pushing a repository"); err != nil {
		return "", "", err
	}
	ws, user := c.Workspace, c.User
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", "", problem.New(problem.Invalid, "name", "a repository needs a name")
	case !utf8.ValidString(name):
		return "", "", problem.New(problem.Invalid, "name", "the repository name is not valid UTF-8")
	case utf8.RuneCountInString(name) > room.MaxNameRunes:
		return "", "", problem.New(problem.Limit, "name", "the repository name is %d characters; it may be at most %d", utf8.RuneCountInString(name), room.MaxNameRunes)
	}
	now := s.Now()
	v, err := room.NewVersion(store.NewID("ver"), files, c.actor(), now)
	if err != nil {
		return "", "", err
	}
	id, err := s.repositoryNamed(ctx, ws, name)
	if err != nil {
		return "", "", err
	}
	enc := make(map[string]string, len(files))
	for p, b := range files {
		enc[p] = base64.StdEncoding.EncodeToString(b)
	}
	content := store.Object{Workspace: ws, Kind: store.KindRepoVersion, ID: v.ID, Parent: id, Doc: mustJSON(map[string]any{"files": enc})}
	fresh := room.Repository{ID: id, Name: name, Versions: []room.Version{}, CreatedAt: now.UTC().Format(room.TimeFormat)}
	m := store.Mutation{
		Workspace: ws, Type: store.TypeRepository, ID: id, Actor: c.actor(),
		Create:          &store.Resource{Owner: user, Title: name, Doc: mustJSON(fresh)},
		CreateIfMissing: true,
		Apply: func(cur *store.Resource) (*store.Change, error) {
			var repo room.Repository
			if err := json.Unmarshal(cur.Doc, &repo); err != nil {
				return nil, fmt.Errorf("repository %s: %w", id, err)
			}
			repo.Versions = append(repo.Versions, v)
			return &store.Change{Doc: mustJSON(repo), Kind: "version_pushed", Changed: []string{v.ID},
				Result:  mustJSON(map[string]any{"repository_id": id, "version_id": v.ID}),
				Objects: []store.Object{content}}, nil
		},
	}
	if _, err := s.guardedWrite(ctx, m); err != nil {
		return "", "", storeProblem(err, m)
	}
	return id, v.ID, nil
}

// RepoList is a page of list_repositories: repositories and their pinned
// versions, metadata only.
type RepoList struct {
	Repositories []room.Repository `json:"repositories"`
	NextCursor   string            `json:"next_cursor,omitempty"`
}

// ListRepositories: repositories and their pinned versions (metadata only).
func (s *Service) ListRepositories(ctx context.Context, c Caller, pg Page) (RepoList, error) {
	cursor := pg.Cursor
	limit, err := pageLimit(pg.Limit)
	if err != nil {
		return RepoList{}, err
	}
	after, err := decodeCursor(cursor, "repo")
	if err != nil {
		return RepoList{}, err
	}
	rows, err := s.Store.List(ctx, store.ListQuery{Workspace: c.Workspace, Type: store.TypeRepository, AfterID: after, Limit: limit + 1, WithDoc: true})
	if err != nil {
		return RepoList{}, err
	}
	res := RepoList{Repositories: []room.Repository{}}
	for i, row := range rows {
		if i == limit {
			break
		}
		var r room.Repository
		if err := json.Unmarshal(row.Doc, &r); err != nil {
			return RepoList{}, err
		}
		res.Repositories = append(res.Repositories, r)
	}
	if len(rows) > limit {
		res.NextCursor = encodeCursor("repo", rows[limit-1].ID)
	}
	return res, nil
}
