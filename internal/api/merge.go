package api

import (
	"errors"

	"foundry/internal/problem"
	"foundry/internal/service"
)

// People who edit a sheet's cells or a slide's fields together are
// ordered by the server: a person's write of cells or of slide fields
// applies on the Note's current version, whatever else was written since
// the version their page had, so two people writing different cells (or
// fields) never meet a conflict, and two writing the same one end with
// the later write. The page of the one whose value was replaced hears of
// it on its live stream and says who replaced what. An agent's write (a
// token's) keeps the write contract: it is checked against the version it
// names.

// mergeTries bounds the versions a person's write is tried on.
const mergeTries = 8

// atCurrent runs call with the guard's version and, for a person, once
// more on the current version each time the Note had moved on (never for
// a version ahead of the Note's, which no read gave).
func atCurrent[T any](c *caller, g *service.Guard, call func() (T, error)) (T, error) {
	for try := 1; ; try++ {
		res, err := call()
		var pr *problem.Problem
		if err == nil || c.svc.IsAgent() || try == mergeTries || !errors.As(err, &pr) || pr.Code != problem.Conflict || pr.Field != "expected_version" {
			return res, err
		}
		cur, ok := pr.Details["current_version"].(int64)
		if !ok || cur <= g.ExpectedVersion {
			return res, err
		}
		g.ExpectedVersion = cur
	}
}
