package account

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"foundry/internal/auth"
	"foundry/internal/store"
)

// SetupLifetime is how long a one-time link to set a password works.
const SetupLifetime = 24 * time.Hour

// SetupPath is where a setup link points.
const SetupPath = "/setup"

// setupRequest groups every setup link of one user, so setting a password
// voids the links not followed.
func setupRequest(userID string) string { return "setup:" + userID }

type setupData struct {
	User string `json:"user"`
}

// randomSecret is 256 random bits, URL-safe.
func randomSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// CreateSetupLink stores a one-time link for u to set a password, valid
// SetupLifetime from now, and answers it as publicURL/setup?token=….
// The store keeps only the token's hash. Older links of u stay valid until
// one of them is followed or a password is set.
func CreateSetupLink(ctx context.Context, st store.Store, u store.User, publicURL string, now time.Time) (link string, expires time.Time, err error) {
	token := randomSecret()
	data, _ := json.Marshal(setupData{User: u.ID})
	expires = now.Add(SetupLifetime).UTC()
	err = st.PutGrant(ctx, store.Grant{
		Kind: store.GrantSetup, Hash: auth.HashToken(token), RequestID: setupRequest(u.ID),
		State: store.GrantActive, Data: data, CreatedAt: now.UTC(), ExpiresAt: expires,
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return strings.TrimRight(publicURL, "/") + SetupPath + "?token=" + url.QueryEscape(token), expires, nil
}

// errLinkDead: the link is unknown, used, voided or expired.
var errLinkDead = errors.New("setup link is unknown, used or expired")

// maxTokenBytes bounds a setup token read from a request (a real one has 43).
const maxTokenBytes = 128

// setupUser is the user a live setup token is for.
func setupUser(ctx context.Context, st store.Store, token string, now time.Time) (store.Grant, store.User, error) {
	if token == "" || len(token) > maxTokenBytes {
		return store.Grant{}, store.User{}, errLinkDead
	}
	g, err := st.Grant(ctx, store.GrantSetup, auth.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return store.Grant{}, store.User{}, errLinkDead
	}
	if err != nil {
		return store.Grant{}, store.User{}, err
	}
	if g.State != store.GrantActive || !now.Before(g.ExpiresAt) {
		return store.Grant{}, store.User{}, errLinkDead
	}
	var d setupData
	if json.Unmarshal(g.Data, &d) != nil || d.User == "" {
		return store.Grant{}, store.User{}, errLinkDead
	}
	u, err := st.UserByID(ctx, d.User)
	if errors.Is(err, store.ErrNotFound) {
		return store.Grant{}, store.User{}, errLinkDead
	}
	return g, u, err
}
