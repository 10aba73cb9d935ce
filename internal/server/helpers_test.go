package server_test

import (
	"os"
	"testing"

	"foundry/internal/browsertest"
	"foundry/internal/server/servertest"
	"foundry/internal/service"
)

// TestMain ends the Chromium the browser tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	browsertest.Close()
	os.Exit(code)
}

// asOwner is the workspace's owner signed in to the web app: who the web
// app's acts run as for them.
func asOwner(e *servertest.Env) service.Caller {
	return service.Person(e.Owner.User.Workspace, e.Owner.User.ID, e.Owner.User.Role)
}
