package account

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"foundry/internal/auth"
	"foundry/internal/store"
)

// wrongCredentials is the one answer to an unknown email, a wrong
// password and an account without a password: none tells which it was.
const wrongCredentials = "Email or password is wrong."

type signinData struct {
	Error, Email, Next, CSRF string
}

// formToken is the double-submit token of r's browser for the sign-in and
// setup forms: the cookie's value if it has a well-formed one, otherwise a
// new one, set on w.
func (m *Manager) formToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(formCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	t := randomSecret()
	http.SetCookie(w, &http.Cookie{Name: formCookie, Value: t, Path: "/", HttpOnly: true, Secure: m.secure, SameSite: http.SameSiteStrictMode, MaxAge: int(SetupLifetime / time.Second)})
	return t
}

// formTokenOK reports whether r's form field equals its double-submit
// cookie.
func formTokenOK(r *http.Request) bool {
	c, err := r.Cookie(formCookie)
	return err == nil && tokensEqual(r.PostForm.Get(auth.CSRFField), c.Value)
}

// parseForm reads r's urlencoded form within maxFormBytes; on failure it
// answers a page saying why and reports false.
func (m *Manager) parseForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		status, text := http.StatusBadRequest, "This form could not be read: send it from the page's own form (as application/x-www-form-urlencoded)."
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			status, text = http.StatusRequestEntityTooLarge, "This form is larger than 64 KiB, which no form of these pages is: send it from the page's own form."
		}
		Render(w, status, "Form not read", messagePage, message{Text: text, Error: true})
		return false
	}
	return true
}

func (m *Manager) forbidden(w http.ResponseWriter, r *http.Request, text string) {
	Render(w, http.StatusForbidden, "Refused", messagePage, message{Text: text, Error: true, Link: "/signin", LinkText: "Go to sign-in"})
}

func (m *Manager) signinForm(w http.ResponseWriter, r *http.Request) {
	next := SafeNext(r.URL.Query().Get("next"))
	if _, ok := m.Current(r); ok {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	Render(w, http.StatusOK, "Sign in to Foundry", signinPage, signinData{Next: next, CSRF: m.formToken(w, r)})
}

func (m *Manager) signin(w http.ResponseWriter, r *http.Request) {
	if !m.parseForm(w, r) {
		return
	}
	if !formTokenOK(r) {
		m.forbidden(w, r, "This sign-in form has expired or was not sent from this site. Open the sign-in page again and sign in from there.")
		return
	}
	f := r.PostForm
	d := signinData{Next: SafeNext(f.Get("next")), CSRF: m.formToken(w, r)}
	email, pw := f.Get("email"), f.Get("password")
	if len(email) <= MaxEmailBytes {
		d.Email = email
	}
	switch {
	case email == "" && pw == "":
		d.Error = "Enter your email and your password."
	case email == "":
		d.Error = "Enter your email."
	case pw == "":
		d.Error = "Enter your password."
	}
	if d.Error != "" {
		Render(w, http.StatusBadRequest, "Sign in to Foundry", signinPage, d)
		return
	}
	now := m.now()
	acct, malformed := NormalizeEmail("email", email)
	if malformed != nil {
		acct = email // still counted: guessing at malformed names is guessing too
		if len(acct) > MaxEmailBytes {
			acct = acct[:MaxEmailBytes]
		}
	}
	addr := clientKey(r)
	keys := keysFor(acct, addr)
	counters, err := m.st.SignInCounters(r.Context(), keys.all(), now)
	if err != nil {
		m.signinFailed(w, r, d, "reading the sign-in counters", err)
		return
	}
	wait, which := m.limits.strict(keys, counters, now)
	backoff, device := time.Duration(0), ""
	if wait == 0 {
		if backoff = m.limits.backoff(keys, counters, now); backoff > 0 {
			var known bool
			if device, known = m.deviceUser(r, acct, now); !known {
				wait, which = backoff, byAccount
			}
		}
	}
	if wait > 0 {
		m.throttled(w, r, d, acct, addr, which, wait, now)
		return
	}
	u, ok, err := m.verify(r.Context(), acct, malformed == nil, pw)
	if errors.Is(err, errHashBusy) {
		m.countSignIn(SignInBusy)
		m.log.WarnContext(r.Context(), "sign-in refused: every password check slot stayed busy", "address", addr, "waited", m.hashes.wait.String())
		m.hashBusy(w, r, func(text string) {
			d.Error = text
			Render(w, http.StatusTooManyRequests, "Sign in to Foundry", signinPage, d)
		})
		return
	}
	if err != nil {
		m.signinFailed(w, r, d, "sign-in", err)
		return
	}
	if !ok {
		if err := m.st.CountSignInFailure(r.Context(), now, m.limits.windows(keys)); err != nil {
			m.log.ErrorContext(r.Context(), "counting a failed sign-in", "err", err)
		}
		m.countSignIn(SignInRefused)
		m.log.InfoContext(r.Context(), "sign-in refused", "email", acct, "address", addr)
		d.Error = wrongCredentials
		Render(w, http.StatusUnauthorized, "Sign in to Foundry", signinPage, d)
		return
	}
	if device != "" && device != u.ID {
		// The cookie was signed for this email when another account had
		// it: the back-off holds.
		m.throttled(w, r, d, acct, addr, byAccount, backoff, now)
		return
	}
	// Only this address's count for the account starts again: the
	// account's back-off and the address's count are what someone else's
	// failures made, and they wear off on their own.
	if _, failed := counters[keys.pair]; failed {
		if err := m.st.ForgetSignInFailures(r.Context(), keys.pair); err != nil {
			m.log.ErrorContext(r.Context(), "forgetting failed sign-ins", "err", err)
		}
	}
	if err := m.startSession(w, r, u); err != nil {
		m.signinFailed(w, r, d, "creating a session", err)
		return
	}
	if err := m.setDevice(r.Context(), w, u, now); err != nil {
		m.log.ErrorContext(r.Context(), "setting the device cookie; signed in without it", "err", err)
	}
	m.countSignIn(SignInOK)
	m.log.InfoContext(r.Context(), "signed in", "user", u.ID, "address", addr)
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
}

// signinFailed answers a sign-in that failed on the server (err, logged
// as what): 500 and the form again.
func (m *Manager) signinFailed(w http.ResponseWriter, r *http.Request, d signinData, what string, err error) {
	m.countSignIn(SignInError)
	m.log.ErrorContext(r.Context(), what, "err", err)
	d.Error = "Something went wrong on the server; try again in a moment."
	Render(w, http.StatusInternalServerError, "Sign in to Foundry", signinPage, d)
}

// throttled answers a sign-in refused by the throttle: 429, Retry-After,
// and a page that says which counter refused it and when to try again
// (the same whether or not the email is an account's).
func (m *Manager) throttled(w http.ResponseWriter, r *http.Request, d signinData, acct, addr, which string, wait time.Duration, now time.Time) {
	m.countSignIn(SignInThrottled)
	m.log.WarnContext(r.Context(), "sign-in throttled", "email", acct, "address", addr, "by", which, "retry_after", wait.Round(time.Second).String())
	w.Header().Set("Retry-After", retryAfter(wait))
	when := retryText(wait, now.Add(wait))
	switch which {
	case byPair:
		d.Error = "Too many failed sign-ins for this account from this address. Try again " + when + "."
	case byAddress:
		d.Error = "Too many failed sign-ins from this address. Try again " + when + "."
	default:
		d.Error = "Too many failed sign-ins for this account, so sign-ins from a browser that has not signed in to it before are slowed down. Try again " + when + ", or from a browser you signed in with before."
	}
	Render(w, http.StatusTooManyRequests, "Sign in to Foundry", signinPage, d)
}

// verify finds the user by email and checks the password; an unknown or
// malformed email, or a user with no password, compares against a dummy
// hash, so each refusal takes as long as a wrong password.
func (m *Manager) verify(ctx context.Context, email string, wellFormed bool, pw string) (store.User, bool, error) {
	var u store.User
	var err error
	if wellFormed && len(pw) <= MaxPasswordBytes {
		u, err = m.st.UserByEmail(ctx, email)
		if errors.Is(err, store.ErrNotFound) {
			u, err = store.User{}, nil
		}
		if err != nil {
			return store.User{}, false, err
		}
	}
	if len(pw) > MaxPasswordBytes {
		pw = pw[:MaxPasswordBytes] // compared against the dummy, never a real hash
	}
	ok, stale, rehash := false, false, ""
	var hashErr error
	if err := m.hashes.run(ctx, func() {
		ok, stale = checkPassword(u.PasswordHash, pw)
		if ok && stale && u.ID != "" {
			// Hashed with older parameters: hashed anew in the same slot.
			rehash, hashErr = HashPassword(pw)
		}
	}); err != nil {
		return store.User{}, false, err
	}
	ok = ok && u.ID != ""
	if ok && rehash != "" && hashErr == nil {
		if done, err := m.st.RehashPassword(ctx, u.ID, u.PasswordHash, rehash); err != nil {
			m.log.ErrorContext(ctx, "storing a password hashed anew; the old hash stays and still works", "user", u.ID, "err", err)
		} else if done {
			m.log.InfoContext(ctx, "password hashed anew with the current parameters", "user", u.ID)
		}
	} else if hashErr != nil {
		m.log.ErrorContext(ctx, "hashing a password anew; the old hash stays and still works", "user", u.ID, "err", hashErr)
	}
	return u, ok, nil
}

// hashBusy answers a request refused because no password check slot came
// free within the wait: 429, Retry-After, and the page render makes with a
// text that says so.
func (m *Manager) hashBusy(w http.ResponseWriter, r *http.Request, render func(text string)) {
	w.Header().Set("Retry-After", retryAfter(m.hashes.wait))
	render(fmt.Sprintf("Foundry is checking too many passwords at once right now, so this one was not checked (nothing was changed). Try again in %s.",
		plural(int(math.Ceil(m.hashes.wait.Seconds())), "second")))
}

// plural is "1 second", "2 seconds".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// startSession stores a new session for u and sets its cookie on w.
func (m *Manager) startSession(w http.ResponseWriter, r *http.Request, u store.User) error {
	secret := randomSecret()
	now := m.now().UTC()
	s := store.Session{Hash: auth.HashToken(secret), Workspace: u.Workspace, User: u.ID, CSRF: randomSecret(), CreatedAt: now, ExpiresAt: now.Add(m.lifetime)}
	if err := m.st.CreateSession(r.Context(), s); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: auth.SessionCookie, Value: secret, Path: "/", HttpOnly: true, Secure: m.secure, SameSite: http.SameSiteLaxMode,
		Expires: s.ExpiresAt, MaxAge: int(m.lifetime / time.Second),
	})
	return nil
}

func (m *Manager) clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: m.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

func (m *Manager) signout(w http.ResponseWriter, r *http.Request) {
	if !m.parseForm(w, r) {
		return
	}
	p, ok := m.Current(r)
	if !ok {
		m.clearSessionCookie(w)
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	if !m.CheckCSRF(r, p) {
		m.forbidden(w, r, "This sign-out was not sent from Foundry's own page, so you are still signed in. Sign out with the button on Foundry's page.")
		return
	}
	if err := m.st.DeleteSession(r.Context(), p.Session.Hash); err != nil {
		m.log.ErrorContext(r.Context(), "ending a session", "err", err)
		Render(w, http.StatusInternalServerError, "Sign out", messagePage, message{Text: "Something went wrong on the server, so you are still signed in; try again in a moment.", Error: true})
		return
	}
	m.clearSessionCookie(w)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

type setupFormData struct {
	Error, Email, Token, CSRF string
}

func (m *Manager) deadLink(w http.ResponseWriter) {
	Render(w, http.StatusGone, "Link not valid", messagePage, message{
		Text:  "This link to set a password was already used, was replaced by a newer password, or has expired (links work once, for 24 hours). Ask the workspace's owner for a new one, or run: foundry user passwd EMAIL",
		Error: true, Link: "/signin", LinkText: "Go to sign-in",
	})
}

func (m *Manager) setupForm(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	_, u, err := setupUser(r.Context(), m.st, token, m.now())
	if errors.Is(err, errLinkDead) {
		m.deadLink(w)
		return
	}
	if err != nil {
		m.log.ErrorContext(r.Context(), "reading a setup link", "err", err)
		Render(w, http.StatusInternalServerError, "Set your password", messagePage, message{Text: "Something went wrong on the server; open the link again in a moment.", Error: true})
		return
	}
	Render(w, http.StatusOK, "Set your password", setupPage, setupFormData{Email: u.Email, Token: token, CSRF: m.formToken(w, r)})
}

func (m *Manager) setup(w http.ResponseWriter, r *http.Request) {
	if !m.parseForm(w, r) {
		return
	}
	if !formTokenOK(r) {
		m.forbidden(w, r, "This form has expired or was not sent from this site, so no password was set. Open your link again and set the password there.")
		return
	}
	f := r.PostForm
	token := f.Get("token")
	g, u, err := setupUser(r.Context(), m.st, token, m.now())
	if errors.Is(err, errLinkDead) {
		m.deadLink(w)
		return
	}
	if err != nil {
		m.log.ErrorContext(r.Context(), "reading a setup link", "err", err)
		Render(w, http.StatusInternalServerError, "Set your password", messagePage, message{Text: "Something went wrong on the server; try again in a moment.", Error: true})
		return
	}
	d := setupFormData{Email: u.Email, Token: token, CSRF: m.formToken(w, r)}
	pw := f.Get("password")
	if err := CheckPasswordRules("password", pw); err != nil {
		d.Error = m.problemText(err, map[string]string{"password": "The password"})
		Render(w, http.StatusBadRequest, "Set your password", setupPage, d)
		return
	}
	if f.Get("confirm") != pw {
		d.Error = "The two passwords differ: type the same password in both fields."
		Render(w, http.StatusBadRequest, "Set your password", setupPage, d)
		return
	}
	var hash string
	if err := m.hashes.run(r.Context(), func() { hash, err = HashPassword(pw) }); errors.Is(err, errHashBusy) {
		m.hashBusy(w, r, func(text string) {
			d.Error = text
			Render(w, http.StatusTooManyRequests, "Set your password", setupPage, d)
		})
		return
	} else if err != nil || hash == "" {
		m.log.ErrorContext(r.Context(), "hashing a password", "err", err)
		d.Error = "Something went wrong on the server and the password was not set; try again in a moment."
		Render(w, http.StatusInternalServerError, "Set your password", setupPage, d)
		return
	}
	// The link is spent first, atomically: of two uses at once, one wins.
	won, err := m.st.SetGrantState(r.Context(), store.GrantSetup, g.Hash, []string{store.GrantActive}, store.GrantUsed)
	if err != nil {
		m.log.ErrorContext(r.Context(), "using a setup link", "err", err)
		d.Error = "Something went wrong on the server and the password was not set; try again in a moment."
		Render(w, http.StatusInternalServerError, "Set your password", setupPage, d)
		return
	}
	if !won {
		m.deadLink(w)
		return
	}
	if err := m.st.SetPassword(r.Context(), u.ID, hash); err != nil {
		m.log.ErrorContext(r.Context(), "setting a password", "user", u.ID, "err", err)
		Render(w, http.StatusInternalServerError, "Set your password", messagePage, message{Text: "Something went wrong on the server and the password was not set; ask for a new link (foundry user passwd EMAIL).", Error: true})
		return
	}
	if err := m.st.RevokeGrants(r.Context(), setupRequest(u.ID), store.GrantSetup); err != nil {
		m.log.ErrorContext(r.Context(), "voiding older setup links", "user", u.ID, "err", err)
	}
	m.log.InfoContext(r.Context(), "password set with a setup link", "user", u.ID)
	if err := m.startSession(w, r, u); err != nil {
		m.log.ErrorContext(r.Context(), "creating a session", "err", err)
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

type homeData struct {
	Name, Email, Role, CSRF string
}

func (m *Manager) home(w http.ResponseWriter, r *http.Request) {
	p, ok := m.Current(r)
	if !ok {
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	name := p.User.Name
	if name == "" {
		name = p.User.Email
	}
	Render(w, http.StatusOK, "Foundry", homePage, homeData{Name: name, Email: p.User.Email, Role: p.User.Role, CSRF: p.Session.CSRF})
}
