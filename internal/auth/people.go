package auth

import (
	"net/http"

	"foundry/internal/store"
)

// Session cookie and CSRF conventions shared by every people-facing door
// (sign-in, OAuth consent, the REST API under /api/).
const (
	// SessionCookie holds a browser session's secret; the store keeps only
	// HashToken(secret) (store.Session.Hash).
	SessionCookie = "foundry_session"
	// CSRFField is the hidden form field, and CSRFHeader the request header
	// of API calls, that carry the session's CSRF token (store.Session.CSRF).
	CSRFField  = "csrf_token"
	CSRFHeader = "X-CSRF-Token"
)

// Person is whoever is signed in on a browser session.
type Person struct {
	User    store.User
	Session store.Session
}

// People is what the doors that serve people need from sign-in
// (account.Manager implements it).
type People interface {
	// Current is the person signed in on r, if any.
	Current(r *http.Request) (Person, bool)
	// SignInURL is where to send someone who must sign in first; after
	// signing in they come back to returnTo (a path on this server, with
	// its query).
	SignInURL(returnTo string) string
	// CheckCSRF reports whether r carries p's CSRF token (form field
	// CSRFField or header CSRFHeader), compared in constant time.
	CheckCSRF(r *http.Request, p Person) bool
}
