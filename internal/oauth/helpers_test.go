package oauth_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"

	"foundry/internal/auth"
	"foundry/internal/oauth"
	"foundry/internal/store"
	"foundry/internal/store/postgres"
	"foundry/internal/store/postgres/pgtest"
	"foundry/internal/store/sqlite"
	"foundry/internal/store/storetest"
)

// fakePeople signs one fixed user in on a request carrying the cookie
// value "signed-in"; its CSRF token is the session's.
type fakePeople struct {
	user store.User
	sess store.Session
}

const signedIn = "signed-in"

func (f *fakePeople) Current(r *http.Request) (auth.Person, bool) {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil || c.Value != signedIn {
		return auth.Person{}, false
	}
	return auth.Person{User: f.user, Session: f.sess}, true
}

func (f *fakePeople) SignInURL(returnTo string) string {
	return "/signin?return_to=" + url.QueryEscape(returnTo)
}

func (f *fakePeople) CheckCSRF(r *http.Request, p auth.Person) bool {
	v := r.PostFormValue(auth.CSRFField)
	return v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(p.Session.CSRF)) == 1
}

type env struct {
	t        testing.TB
	st       store.Store
	srv      *oauth.Server
	http     *httptest.Server
	url      string
	resource string
	ws       string
	user     store.User
	people   *fakePeople
	client   store.Client
	offset   atomic.Int64 // added to the server's clock, in ns
	browser  *http.Client
	mux      *http.ServeMux
}

func openSQLite(t testing.TB) store.Store {
	s, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t *testing.T) store.Store {
	u, _ := pgtest.Schema(t)
	s, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// bothStores runs f on SQLite and, when FOUNDRY_TEST_POSTGRES_URL is set,
// on PostgreSQL.
func bothStores(t *testing.T, f func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) { f(t, openSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, openPostgres(t)) })
}

func newEnv(t testing.TB, st store.Store, mod func(*oauth.Options)) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, st: st}
	e.ws = storetest.Seed(t, st)
	users, err := st.Users(ctx, e.ws)
	if err != nil || len(users) != 1 {
		t.Fatalf("users %v %v", users, err)
	}
	e.user = users[0]
	e.people = &fakePeople{user: e.user, sess: store.Session{Hash: "h", Workspace: e.ws, User: e.user.ID, CSRF: "csrf-" + store.NewID("x")}}
	var handler atomic.Value
	e.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(e.http.Close)
	e.url = e.http.URL
	e.resource = e.url + "/mcp"
	opts := oauth.Options{
		Issuer: e.url, People: e.people,
		Now: func() time.Time { return time.Now().Add(time.Duration(e.offset.Load())) },
	}
	if mod != nil {
		mod(&opts)
	}
	e.srv, err = oauth.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.mux = http.NewServeMux()
	e.srv.Mount(e.mux)
	handler.Store(e.mux)
	e.client = store.Client{ID: "cli_" + store.NewID("c"), Name: "Test Client", Kind: store.ClientRegistered,
		RedirectURIs: []string{"http://127.0.0.1/callback"}, CreatedAt: time.Now()}
	if err := st.CreateClient(ctx, e.client); err != nil {
		t.Fatal(err)
	}
	e.browser = &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return e
}

func pkcePair() (verifier, challenge string) {
	b := make([]byte, 32)
	rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authParams is a valid authorization request of e.client.
func (e *env) authParams(challenge string) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {e.client.ID},
		"redirect_uri":          {e.client.RedirectURIs[0]},
		"scope":                 {auth.ScopeRead + " " + auth.ScopeWrite},
		"state":                 {"state-0123456789"},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
		"resource":              {e.resource},
	}
}

func (e *env) get(path string, signed bool) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if signed {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: signedIn})
	}
	resp, err := e.browser.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func (e *env) postForm(path string, form url.Values, signed bool) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if signed {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: signedIn})
	}
	resp, err := e.browser.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func readBody(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// consentForm is the consent page's form as a browser would submit it:
// every hidden field, the checked checkboxes and radios.
type consentForm struct {
	action string
	values url.Values
	page   string
}

func parseConsent(t testing.TB, page string) consentForm {
	t.Helper()
	f := consentForm{values: url.Values{}, page: page}
	z := html.NewTokenizer(strings.NewReader(page))
	found := false
	for i := 0; i < 100000; i++ {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		attr := map[string]string{}
		has := map[string]bool{}
		for _, a := range tok.Attr {
			attr[a.Key], has[a.Key] = a.Val, true
		}
		switch tok.Data {
		case "form":
			f.action, found = attr["action"], true
		case "input":
			switch attr["type"] {
			case "hidden":
				f.values.Add(attr["name"], attr["value"])
			case "checkbox", "radio":
				if has["checked"] {
					f.values.Add(attr["name"], attr["value"])
				}
			}
		}
	}
	if !found {
		t.Fatalf("no form on the page:\n%s", page)
	}
	return f
}

// consent opens the consent page for params, signed in, and returns its form.
func (e *env) consent(params url.Values) consentForm {
	e.t.Helper()
	resp := e.get("/authorize?"+params.Encode(), true)
	body := readBody(e.t, resp)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("authorize: %d %s", resp.StatusCode, body)
	}
	return parseConsent(e.t, body)
}

// submit posts the consent form with the decision and returns the
// redirect's URL.
func (e *env) submit(f consentForm, decision string) *url.URL {
	e.t.Helper()
	v := url.Values{}
	for k, vals := range f.values {
		v[k] = append([]string(nil), vals...)
	}
	v.Set("consent_decision", decision)
	resp := e.postForm(f.action, v, true)
	body := readBody(e.t, resp)
	if resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("consent %s: %d %s", decision, resp.StatusCode, body)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		e.t.Fatal(err)
	}
	return loc
}

// code runs authorization to the code, approving what the page proposes.
func (e *env) code(challenge string) string {
	e.t.Helper()
	loc := e.submit(e.consent(e.authParams(challenge)), "approve")
	q := loc.Query()
	if q.Get("code") == "" || q.Get("iss") != e.url || q.Get("state") != "state-0123456789" {
		e.t.Fatalf("authorization response %s: want code, state and iss=%s", loc, e.url)
	}
	return q.Get("code")
}

type tokenResp struct {
	Status       int
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
}

func (e *env) token(form url.Values) tokenResp {
	e.t.Helper()
	resp := e.postForm("/token", form, false)
	body := readBody(e.t, resp)
	var tr tokenResp
	if err := json.Unmarshal([]byte(body), &tr); err != nil {
		e.t.Fatalf("token response %d is not JSON: %s", resp.StatusCode, body)
	}
	tr.Status = resp.StatusCode
	return tr
}

func (e *env) exchange(code, verifier string) tokenResp {
	e.t.Helper()
	return e.token(url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"client_id": {e.client.ID}, "redirect_uri": {e.client.RedirectURIs[0]}, "resource": {e.resource},
	})
}

func (e *env) refresh(rt string, extra url.Values) tokenResp {
	e.t.Helper()
	f := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {e.client.ID}}
	for k, v := range extra {
		f[k] = v
	}
	return e.token(f)
}

func (e *env) mustTokens(tr tokenResp) tokenResp {
	e.t.Helper()
	if tr.Status != http.StatusOK || tr.AccessToken == "" || tr.RefreshToken == "" {
		e.t.Fatalf("token endpoint: %+v", tr)
	}
	return tr
}

func (e *env) verify(tok string) (auth.Principal, error) {
	return e.srv.Verify(context.Background(), tok)
}
