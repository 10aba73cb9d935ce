package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"foundry/internal/server"
	"foundry/internal/server/servertest"
)

// TestBlobCollectorRunsInTheBackground: once started, the collector
// removes an unreferenced blob after the grace period by itself, and its
// stop returns once the loop has ended.
func TestBlobCollectorRunsInTheBackground(t *testing.T) {
	e := servertest.Start(t, servertest.Options{Config: server.Config{BlobGrace: 2 * time.Second}})
	ctx := context.Background()
	ws := e.Owner.Workspace.ID
	blobs := e.Server.Store.Blobs()
	sha, _, err := blobs.Put(ctx, ws, strings.NewReader("bytes of a refused upload"), 100)
	if err != nil {
		t.Fatal(err)
	}
	stop := e.Server.Blobs.Start()
	defer stop()
	deadline := time.Now().Add(30 * time.Second) // bounded wait: passes run every second
	for {
		if ok, err := blobs.Has(ctx, ws, sha); err != nil {
			t.Fatal(err)
		} else if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background collector did not remove the unreferenced blob")
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	stop() // a second stop is harmless
}
