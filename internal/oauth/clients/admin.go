package clients

import (
	"context"
	"errors"
	"fmt"
	"time"

	"foundry/internal/store"
)

// Spec is a client added by an operator (`foundry client add`).
type Spec struct {
	Name         string
	RedirectURIs []string
	// Confidential clients get a secret and authenticate with it
	// (client_secret_basic or client_secret_post); others are public and
	// use PKCE alone.
	Confidential bool
}

// Add stores a pre-registered client, checked as /register checks a
// registration. It answers the client and, for a confidential one, its
// secret, which is shown once: only its hash is stored. A refusal is an
// *Error naming the field (name: client_name, redirect URIs:
// redirect_uris[i]).
func Add(ctx context.Context, st store.Store, spec Spec) (store.Client, string, error) {
	m, err := specMetadata(spec)
	if err != nil {
		return store.Client{}, "", err
	}
	return create(ctx, st, store.ClientRegistered, m, time.Now())
}

// CheckSpec is Add's checks alone, to refuse a spec before opening data.
func CheckSpec(spec Spec) error {
	_, err := specMetadata(spec)
	return err
}

func specMetadata(spec Spec) (Metadata, error) {
	m := Metadata{ClientName: spec.Name, RedirectURIs: spec.RedirectURIs, TokenEndpointAuthMethod: AuthNone}
	if spec.Confidential {
		m.TokenEndpointAuthMethod = AuthSecretBasic
	}
	if m.RedirectURIs == nil {
		m.RedirectURIs = []string{}
	}
	m, e := normalize(m, false)
	if e != nil {
		return m, e
	}
	if m.ClientName == "" {
		return m, invalid("client_name", "is empty: give the name people will see on the consent page")
	}
	return m, nil
}

// List is every stored client, oldest first.
func List(ctx context.Context, st store.Store) ([]store.Client, error) {
	return st.Clients(ctx)
}

// ErrNoClient is a Remove of a client that is not stored.
var ErrNoClient = errors.New("no such client")

// Remove revokes every live connection to the client (and so every token
// issued to it), in every workspace, then deletes the client. It answers
// how many connections it revoked.
func Remove(ctx context.Context, st store.Store, id string) (int, error) {
	if _, err := st.Client(ctx, id); errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("%w %s", ErrNoClient, excerpt(id))
	} else if err != nil {
		return 0, err
	}
	wss, err := st.Workspaces(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ws := range wss {
		conns, err := st.Connections(ctx, ws.ID)
		if err != nil {
			return n, err
		}
		for _, c := range conns {
			if c.Client != id || c.RevokedAt != nil {
				continue
			}
			if err := st.RevokeConnection(ctx, ws.ID, c.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return n, err
			}
			n++
		}
	}
	if err := st.DeleteClient(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return n, err
	}
	return n, nil
}
