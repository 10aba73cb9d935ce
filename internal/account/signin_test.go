package account_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"foundry/internal/account"
	"foundry/internal/auth"
	"foundry/internal/store"
)

func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == auth.SessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie set; Set-Cookie: %q", auth.SessionCookie, resp.Header.Values("Set-Cookie"))
	return nil
}

// TestSignInStartsASession: the right password makes a session in the
// store (kept by its hash only), sets an HttpOnly, SameSite=Lax cookie for
// the whole site, and sends the person to next; GET / then knows them.
func TestSignInStartsASession(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{PublicURL: "http://127.0.0.1:8080"})
		b := newBrowser(t, e.srv.URL)
		if who := b.whoami(); who != "" {
			t.Fatalf("signed in before signing in: %q", who)
		}
		resp, page := b.signIn("  ADA@Example.com ", adaPass, "/authorize?client_id=x&state=y")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/authorize?client_id=x&state=y" {
			t.Fatalf("sign-in: %d to %q\n%s", resp.StatusCode, resp.Header.Get("Location"), page)
		}
		c := sessionCookie(t, resp)
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure {
			t.Errorf("session cookie HttpOnly=%v SameSite=%v Path=%q Secure=%v; want HttpOnly, Lax, /, not Secure over http", c.HttpOnly, c.SameSite, c.Path, c.Secure)
		}
		if life := time.Duration(c.MaxAge) * time.Second; life != 14*24*time.Hour {
			t.Errorf("session cookie lives %s, want 14 days", life)
		}
		if len(c.Value) < 43 {
			t.Errorf("session secret %q is shorter than 256 bits", c.Value)
		}
		s, err := e.st.SessionByHash(context.Background(), auth.HashToken(c.Value), time.Now())
		if err != nil {
			t.Fatalf("the session is not in the store under the secret's hash: %v", err)
		}
		if s.User != e.ada.ID || s.Workspace != e.ada.Workspace || s.CSRF == "" || s.Hash == c.Value {
			t.Errorf("stored session %+v", s)
		}
		if _, err := e.st.SessionByHash(context.Background(), c.Value, time.Now()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the secret itself finds a session: %v", err)
		}
		if who := b.whoami(); who != adaEmail {
			t.Errorf("GET / says %q is signed in, want %s", who, adaEmail)
		}
		// Signed in, the sign-in page sends on to next.
		resp, _ = b.get("/signin?next=%2Fsomewhere")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/somewhere" {
			t.Errorf("GET /signin when signed in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		// A session that has expired is no session.
		e.clock.Add(14*24*time.Hour + time.Second)
		if who := b.whoami(); who != "" {
			t.Errorf("an expired session still signs in %q", who)
		}
	})
}

// TestSecureCookiesBehindTLS: with an https public URL, the session,
// device and form cookies are Secure.
func TestSecureCookiesBehindTLS(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{PublicURL: "https://foundry.example.com"})
		b := newBrowser(t, e.srv.URL)
		resp, _ := b.get("/signin")
		var form *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == "foundry_csrf" {
				form = c
			}
		}
		if form == nil || !form.Secure || !form.HttpOnly || form.SameSite != http.SameSiteStrictMode {
			t.Fatalf("form cookie %+v; want Secure, HttpOnly, SameSite=Strict", form)
		}
		f := hidden(mustBody(t, b, "/signin"))
		// The jar does not send a Secure cookie over http: send it by hand.
		f.Set("email", adaEmail)
		f.Set("password", adaPass)
		f.Set(auth.CSRFField, form.Value)
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/signin", strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(form)
		resp, page := b.do(req)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in: %d\n%s", resp.StatusCode, page)
		}
		if c := sessionCookie(t, resp); !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
			t.Errorf("session cookie %+v; want Secure, HttpOnly, Lax", c)
		}
		if c := deviceCookieOf(resp); c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
			t.Errorf("device cookie %+v; want Secure, HttpOnly, Lax", c)
		}
	})
}

func mustBody(t *testing.T, b *browser, path string) string {
	t.Helper()
	resp, page := b.get(path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	return page
}

// TestWrongPasswordAndUnknownEmailLookAlike: a wrong password, an unknown
// email, a malformed one and an account with no password yet all get the
// same page with the same status, and none signs in.
func TestWrongPasswordAndUnknownEmailLookAlike(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		type answer struct {
			status int
			text   string
		}
		var answers []answer
		for _, c := range []struct{ email, pw string }{
			{adaEmail, "wrong password"},
			{"nobody@example.com", adaPass},
			{"not-an-email", adaPass},
			{ownerEmail, "anything at all"}, // no password set yet
		} {
			b := newBrowser(t, e.srv.URL)
			resp, page := b.signIn(c.email, c.pw, "")
			answers = append(answers, answer{resp.StatusCode, errorText(page)})
			if b.cookie(auth.SessionCookie) != "" {
				t.Errorf("%s with %q got a session", c.email, c.pw)
			}
			if !strings.Contains(page, `value="`+c.email+`"`) {
				t.Errorf("%s: the form does not keep the email typed", c.email)
			}
		}
		for i, a := range answers {
			if a != (answer{http.StatusUnauthorized, "Email or password is wrong."}) {
				t.Errorf("answer %d: %d %q; want 401 %q", i, a.status, a.text, "Email or password is wrong.")
			}
		}
	})
}

// TestThrottlePerAccount: after the account's failures from one address
// in the window, even the right password from there is refused with 429, Retry-After and when to try
// again; once the window has passed it works.
func TestThrottlePerAccount(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{AccountAddressFailures: 3, AddressFailures: 100, ThrottleWindow: 10 * time.Minute})
		b := newBrowser(t, e.srv.URL)
		for i := range 3 {
			if resp, _ := b.signIn(adaEmail, "wrong password "+strconv.Itoa(i), ""); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure %d: %d", i, resp.StatusCode)
			}
			e.clock.Add(time.Minute)
		}
		resp, page := b.signIn(strings.ToUpper(adaEmail), adaPass, "")
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("right password after 3 failures: %d, want 429\n%s", resp.StatusCode, page)
		}
		// The first failure leaves the window 10 minutes after it: 7 from now.
		if ra := resp.Header.Get("Retry-After"); ra != "420" {
			t.Errorf("Retry-After %q, want 420 (seconds until the oldest failure leaves the window)", ra)
		}
		if txt := errorText(page); !strings.Contains(txt, "Try again in 7 minutes") {
			t.Errorf("throttled page says %q; want when to try again", txt)
		}
		if b.cookie(auth.SessionCookie) != "" {
			t.Error("a throttled sign-in got a session")
		}
		// Another account from the same address is not throttled.
		if resp, _ := newBrowser(t, e.srv.URL).signIn("nobody@example.com", "x-wrong-pass", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("another account: %d, want 401", resp.StatusCode)
		}
		e.clock.Add(7 * time.Minute)
		if resp, page := b.signIn(adaEmail, adaPass, ""); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("after the window: %d\n%s", resp.StatusCode, errorText(page))
		}
	})
}

// TestThrottlePerAddress: failures on many accounts from one address
// throttle that address, for every account, the right password included.
func TestThrottlePerAddress(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{AccountAddressFailures: 100, AddressFailures: 4, ThrottleWindow: 15 * time.Minute})
		b := newBrowser(t, e.srv.URL)
		for i := range 4 {
			if resp, _ := b.signIn("guess"+strconv.Itoa(i)+"@example.com", "wrong password", ""); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure %d: %d", i, resp.StatusCode)
			}
		}
		resp, page := b.signIn(adaEmail, adaPass, "")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("right password from a throttled address: %d (Retry-After %q), want 429", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if !strings.Contains(errorText(page), "Try again in 15 minutes") {
			t.Errorf("throttled page says %q", errorText(page))
		}
		e.clock.Add(15 * time.Minute)
		if resp, _ := b.signIn(adaEmail, adaPass, ""); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("after the window: %d", resp.StatusCode)
		}
	})
}

// TestCSRF: sign-in, sign-out and setup refuse a form without its token,
// and every POST sent by a browser from another site.
func TestCSRF(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		ctx := context.Background()

		// Sign-in without the double-submit token, or with another one.
		b := newBrowser(t, e.srv.URL)
		f := b.signinForm("")
		f.Set("email", adaEmail)
		f.Set("password", adaPass)
		for _, tok := range []string{"", "forged", f.Get(auth.CSRFField) + "x"} {
			g := url.Values{"email": {adaEmail}, "password": {adaPass}, auth.CSRFField: {tok}}
			if resp, _ := b.post("/signin", g); resp.StatusCode != http.StatusForbidden {
				t.Errorf("sign-in with token %q: %d, want 403", tok, resp.StatusCode)
			}
		}
		if b.cookie(auth.SessionCookie) != "" {
			t.Fatal("a sign-in without its token got a session")
		}

		// Sign-out without the session's token leaves the session.
		b.mustSignIn(adaEmail, adaPass)
		_, home := b.get("/")
		tok := hidden(home).Get(auth.CSRFField)
		if tok == "" {
			t.Fatalf("the sign-out form has no token:\n%s", home)
		}
		if resp, _ := b.post("/signout", url.Values{}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("sign-out without the token: %d, want 403", resp.StatusCode)
		}
		if resp, _ := b.post("/signout", url.Values{auth.CSRFField: {"wrong"}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("sign-out with a wrong token: %d, want 403", resp.StatusCode)
		}
		if b.whoami() != adaEmail {
			t.Fatal("a refused sign-out signed out")
		}

		// A browser POST from another site is refused before any token is
		// looked at, even with the right one.
		for _, h := range [][]string{
			{"Sec-Fetch-Site", "cross-site"},
			{"Origin", "https://evil.example.com"},
			{"Sec-Fetch-Site", "same-site"},
		} {
			if resp, page := b.post("/signout", url.Values{auth.CSRFField: {tok}}, h...); resp.StatusCode != http.StatusForbidden {
				t.Errorf("sign-out with %s: %s: %d, want 403\n%s", h[0], h[1], resp.StatusCode, page)
			}
			other := newBrowser(t, e.srv.URL)
			g := other.signinForm("")
			g.Set("email", adaEmail)
			g.Set("password", adaPass)
			if resp, _ := other.post("/signin", g, h...); resp.StatusCode != http.StatusForbidden || other.cookie(auth.SessionCookie) != "" {
				t.Errorf("sign-in with %s: %s: %d, want 403", h[0], h[1], resp.StatusCode)
			}
		}
		if b.whoami() != adaEmail {
			t.Fatal("a cross-site sign-out signed out")
		}
		// Same-origin with the token: signed out, cookie cleared.
		resp, _ := b.post("/signout", url.Values{auth.CSRFField: {tok}}, "Origin", e.srv.URL, "Sec-Fetch-Site", "same-origin")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin" {
			t.Errorf("sign-out: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		if c := sessionCookie(t, resp); c.MaxAge >= 0 {
			t.Errorf("sign-out leaves the cookie: %+v", c)
		}
		if b.whoami() != "" {
			t.Error("still signed in after signing out")
		}

		// Setup without its form token sets no password and keeps the link.
		link, _, err := account.CreateSetupLink(ctx, e.st, e.owner, e.srv.URL, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		path := strings.TrimPrefix(link, e.srv.URL)
		sb := newBrowser(t, e.srv.URL)
		g := hidden(mustBody(t, sb, path))
		g.Set("password", "a new password")
		g.Set("confirm", "a new password")
		g.Del(auth.CSRFField)
		if resp, _ := sb.post(account.SetupPath, g); resp.StatusCode != http.StatusForbidden {
			t.Errorf("setup without its token: %d, want 403", resp.StatusCode)
		}
		if u, _ := e.st.UserByID(ctx, e.owner.ID); u.PasswordHash != "" {
			t.Error("setup without its token set a password")
		}
		if resp, _ := sb.get(path); resp.StatusCode != http.StatusOK {
			t.Errorf("the link no longer works after a refused setup: %d", resp.StatusCode)
		}
	})
}

// TestSetupLink: the link shows whose password it sets, refuses a bad
// password without being spent, sets a good one and signs the person in;
// it then works no more, nor do older links; an expired link never works.
func TestSetupLink(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		ctx := context.Background()
		older, _, err := account.CreateSetupLink(ctx, e.st, e.owner, e.srv.URL+"/", e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		link, exp, err := account.CreateSetupLink(ctx, e.st, e.owner, e.srv.URL, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(link, e.srv.URL+"/setup?token=") || !strings.HasPrefix(older, e.srv.URL+"/setup?token=") {
			t.Fatalf("links %q, %q", link, older)
		}
		if d := exp.Sub(e.clock.Now()); d != 24*time.Hour {
			t.Errorf("link valid for %s, want 24h", d)
		}
		path := strings.TrimPrefix(link, e.srv.URL)
		b := newBrowser(t, e.srv.URL)
		page := mustBody(t, b, path)
		if !strings.Contains(page, ownerEmail) {
			t.Errorf("the setup page does not say whose password it sets:\n%s", page)
		}
		f := hidden(page)
		for _, c := range []struct{ pw, confirm, want string }{
			{"short", "short", "5 bytes long"},
			{"bell\x07in it", "bell\x07in it", "control character"},
			{"a good password", "another password", "differ"},
		} {
			f.Set("password", c.pw)
			f.Set("confirm", c.confirm)
			resp, page := b.post(account.SetupPath, f)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(errorText(page), c.want) {
				t.Errorf("setup with %q/%q: %d %q; want 400 saying %q", c.pw, c.confirm, resp.StatusCode, errorText(page), c.want)
			}
		}
		f.Set("password", "a good password")
		f.Set("confirm", "a good password")
		resp, page := b.post(account.SetupPath, f)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Fatalf("setup: %d to %q\n%s", resp.StatusCode, resp.Header.Get("Location"), page)
		}
		if who := b.whoami(); who != ownerEmail {
			t.Errorf("after setup GET / says %q", who)
		}
		newBrowser(t, e.srv.URL).mustSignIn(ownerEmail, "a good password")

		// Spent: the same link, and the older one, no longer work.
		for _, l := range []string{link, older} {
			b2 := newBrowser(t, e.srv.URL)
			p := strings.TrimPrefix(l, e.srv.URL)
			if resp, _ := b2.get(p); resp.StatusCode != http.StatusGone {
				t.Errorf("GET a spent link: %d, want 410", resp.StatusCode)
			}
		}
		if resp, page := b.post(account.SetupPath, f); resp.StatusCode != http.StatusGone || !strings.Contains(page, "already used") {
			t.Errorf("second use: %d, want 410\n%s", resp.StatusCode, page)
		}
		newBrowser(t, e.srv.URL).mustSignIn(ownerEmail, "a good password")

		// Expired: made 25 hours ago.
		stale, _, err := account.CreateSetupLink(ctx, e.st, e.ada, e.srv.URL, e.clock.Now().Add(-25*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		sb := newBrowser(t, e.srv.URL)
		if resp, _ := sb.get(strings.TrimPrefix(stale, e.srv.URL)); resp.StatusCode != http.StatusGone {
			t.Errorf("GET an expired link: %d, want 410", resp.StatusCode)
		}
		g := hidden(mustBody(t, sb, "/signin"))
		g.Set("token", strings.TrimPrefix(stale, e.srv.URL+"/setup?token="))
		g.Set("password", "taken over!")
		g.Set("confirm", "taken over!")
		if resp, _ := sb.post(account.SetupPath, g); resp.StatusCode != http.StatusGone {
			t.Errorf("POST an expired link: %d, want 410", resp.StatusCode)
		}
		newBrowser(t, e.srv.URL).mustSignIn(adaEmail, adaPass)
		// Unknown and oversized tokens.
		for _, p := range []string{"/setup", "/setup?token=nope", "/setup?token=" + strings.Repeat("a", 5000)} {
			if resp, _ := sb.get(p); resp.StatusCode != http.StatusGone {
				t.Errorf("GET %.40s: %d, want 410", p, resp.StatusCode)
			}
		}
	})
}

// TestSetupLinkUsedTwiceAtOnce: of two uses of one link at the same
// instant, exactly one sets the password.
func TestSetupLinkUsedTwiceAtOnce(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		link, _, err := account.CreateSetupLink(context.Background(), e.st, e.owner, e.srv.URL, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		path := strings.TrimPrefix(link, e.srv.URL)
		var forms [2]url.Values
		var bs [2]*browser
		for i := range bs {
			bs[i] = newBrowser(t, e.srv.URL)
			forms[i] = hidden(mustBody(t, bs[i], path))
			pw := "password number " + strconv.Itoa(i)
			forms[i].Set("password", pw)
			forms[i].Set("confirm", pw)
		}
		var wg sync.WaitGroup
		var codes [2]int
		for i := range bs {
			wg.Go(func() {
				resp, _ := bs[i].post(account.SetupPath, forms[i])
				codes[i] = resp.StatusCode
			})
		}
		wg.Wait()
		won := 0
		for i, c := range codes {
			switch c {
			case http.StatusSeeOther:
				won++
				newBrowser(t, e.srv.URL).mustSignIn(ownerEmail, "password number "+strconv.Itoa(i))
			case http.StatusGone:
			default:
				t.Errorf("use %d: %d", i, c)
			}
		}
		if won != 1 {
			t.Errorf("%d of two simultaneous uses set the password (%v), want exactly 1", won, codes)
		}
	})
}

// TestNextStaysOnThisServer: a return path that leaves the server lands
// on / after signing in; a path with its query is kept.
func TestNextStaysOnThisServer(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"//evil.example.com":              "/",
		"https://evil.example.com":        "/",
		"/\\evil.example.com":             "/",
		"\\\\evil.example.com":            "/",
		"/\t/evil.example.com":            "/",
		"/%0a/evil":                       "/%0a/evil", // percent-encoded: a path here
		"http:/evil.example.com":          "/",
		"javascript:alert(1)":             "/",
		"evil.example.com":                "/",
		"":                                "/",
		"/signin":                         "/",
		"/authorize?client_id=c&state=s":  "/authorize?client_id=c&state=s",
		"/notes/n%2F1?tab=2":              "/notes/n%2F1?tab=2",
		"/" + strings.Repeat("a", 5000):   "/",
		"/ünïcode?q=✓":                    "/ünïcode?q=✓",
		"/x\u2028y":                       "/",
		"///evil.example.com":             "/",
		"/.//evil.example.com":            "/",
		"/%2e%2e//evil.example.com":       "/",
		"/notes/":                         "/notes/",
		"/@evil.example.com":              "/@evil.example.com",
		"/ok#frag":                        "/ok#frag",
		"https:///evil.example.com/?next": "/",
	} {
		if got := account.SafeNext(next); got != want {
			t.Errorf("SafeNext(%q) = %q, want %q", next, got, want)
		}
	}
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		for _, next := range []string{"//evil.example.com", "https://evil.example.com", "/\\evil.example.com"} {
			b := newBrowser(t, e.srv.URL)
			f := b.signinForm(next)
			f.Set("email", adaEmail)
			f.Set("password", adaPass)
			f.Set("next", next) // as if the hidden field were edited too
			resp, _ := b.post("/signin", f)
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
				t.Errorf("next %q: %d to %q, want 303 to /", next, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
		if got := e.m.SignInURL("/authorize?a=1&b=2"); got != "/signin?next=%2Fauthorize%3Fa%3D1%26b%3D2" {
			t.Errorf("SignInURL = %q", got)
		}
		if got := e.m.SignInURL("//evil.example.com"); got != "/signin" {
			t.Errorf("SignInURL(//evil.example.com) = %q", got)
		}
	})
}

// TestSessionOnAnotherNode: a session made on one node signs the person
// in on another node on the same data, and signing out on one ends it on
// both.
func TestSessionOnAnotherNode(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e1 := newEnv(t, open(t), account.Options{})
		e2 := newEnv(t, open(t), account.Options{})
		b := newBrowser(t, e1.srv.URL)
		b.mustSignIn(adaEmail, adaPass)
		secret := b.cookie(auth.SessionCookie)
		b2 := newBrowser(t, e2.srv.URL)
		u2, _ := url.Parse(e2.srv.URL)
		b2.c.Jar.SetCookies(u2, []*http.Cookie{{Name: auth.SessionCookie, Value: secret, Path: "/"}})
		if who := b2.whoami(); who != adaEmail {
			t.Fatalf("node 2 says %q is signed in, want %s", who, adaEmail)
		}
		_, home := b2.get("/")
		resp, _ := b2.post("/signout", url.Values{auth.CSRFField: {hidden(home).Get(auth.CSRFField)}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-out on node 2: %d", resp.StatusCode)
		}
		if who := b.whoami(); who != "" {
			t.Errorf("signed out on node 2, node 1 still signs in %q", who)
		}
	})
}

// TestPasswordChangeEndsSessions: a new password, set by the CLI's path or
// by a setup link, ends every session made with the old one.
func TestPasswordChangeEndsSessions(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		ctx := context.Background()
		phone, laptop := newBrowser(t, e.srv.URL), newBrowser(t, e.srv.URL)
		phone.mustSignIn(adaEmail, adaPass)
		laptop.mustSignIn(adaEmail, adaPass)
		if err := account.SetPassword(ctx, e.st, e.ada, "password", "a brand new password"); err != nil {
			t.Fatal(err)
		}
		if phone.whoami() != "" || laptop.whoami() != "" {
			t.Error("sessions survive a password change")
		}
		if resp, _ := phone.signIn(adaEmail, adaPass, ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("old password after the change: %d, want 401", resp.StatusCode)
		}
		phone.mustSignIn(adaEmail, "a brand new password")

		// Through a setup link: the old session ends, the new one is made.
		link, _, err := account.CreateSetupLink(ctx, e.st, e.ada, e.srv.URL, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		f := hidden(mustBody(t, laptop, strings.TrimPrefix(link, e.srv.URL)))
		f.Set("password", "third password")
		f.Set("confirm", "third password")
		if resp, _ := laptop.post(account.SetupPath, f); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("setup: %d", resp.StatusCode)
		}
		if phone.whoami() != "" {
			t.Error("the phone's session survives a password set by link")
		}
		if laptop.whoami() != adaEmail {
			t.Error("setup did not sign the laptop in")
		}
		// A link made before a password set by the CLI path is void.
		link, _, _ = account.CreateSetupLink(ctx, e.st, e.ada, e.srv.URL, e.clock.Now())
		if err := account.SetPassword(ctx, e.st, e.ada, "password", "fourth password"); err != nil {
			t.Fatal(err)
		}
		if resp, _ := laptop.get(strings.TrimPrefix(link, e.srv.URL)); resp.StatusCode != http.StatusGone {
			t.Errorf("a link older than the password: %d, want 410", resp.StatusCode)
		}
	})
}

// TestRemovedUserIsSignedOut: a session whose user was removed signs no
// one in.
func TestRemovedUserIsSignedOut(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		b := newBrowser(t, e.srv.URL)
		b.mustSignIn(adaEmail, adaPass)
		if err := account.RemoveUser(context.Background(), e.st, e.ada); err != nil {
			t.Fatal(err)
		}
		if who := b.whoami(); who != "" {
			t.Errorf("a removed user is still signed in as %q", who)
		}
		if resp, _ := b.signIn(adaEmail, adaPass, ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a removed user signs in: %d", resp.StatusCode)
		}
		err := account.RemoveUser(context.Background(), e.st, e.owner)
		if err == nil || !strings.Contains(err.Error(), "last owner") {
			t.Errorf("removing the last owner: %v", err)
		}
	})
}
