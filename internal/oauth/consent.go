package oauth

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ory/fosite"

	"foundry/internal/account"
	"foundry/internal/auth"
	"foundry/internal/oauth/clients"
	"foundry/internal/reqlog"
	"foundry/internal/store"
)

// Consent form fields. The authorization request's own parameters travel
// with the form as hidden fields; these names never clash with them.
const (
	fieldDecision  = "consent_decision" // approve | deny
	fieldScope     = "consent_scope"
	fieldNotesMode = "consent_notes_mode" // all | list
	fieldNotes     = "consent_notes"
	fieldRoomsMode = "consent_rooms_mode"
	fieldRooms     = "consent_rooms"
)

// listLimit bounds the Notes and Rooms the consent page lists, and
// maxChosen the IDs a consent may name.
const (
	listLimit = 200
	maxChosen = 500
)

func isConsentField(k string) bool {
	return strings.HasPrefix(k, "consent_") || k == auth.CSRFField
}

// authorizeParams is the authorization request's parameters, without the
// consent form's own.
func authorizeParams(form url.Values) url.Values {
	out := url.Values{}
	for k, v := range form {
		if !isConsentField(k) {
			out[k] = v
		}
	}
	return out
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, http.StatusBadRequest, "The request is not a form of at most 64 KiB.")
		return
	}
	ctx := withRequestedRedirect(r.Context(), r.Form.Get("redirect_uri"))
	if r.Form.Get("state") == "" && !pkceS256(r.Form) {
		// state is what protects a client without PKCE from a forged
		// response: without both, the request is refused here, on a page
		// the person sees, rather than by a redirect the client may drop.
		reqlog.NoteRefusal(w, reqlog.DoorOAuth, fosite.ErrInvalidState.ErrorField)
		s.errorPage(w, http.StatusBadRequest, fosite.ErrInvalidState.ErrorField+": The application sent neither state nor a PKCE S256 code_challenge, so its sign-in cannot be protected; Foundry needs at least PKCE (code_challenge_method=S256).")
		return
	}
	ar, err := s.newAuthorizeRequest(ctx, r)
	if err != nil {
		s.authorizeError(ctx, w, ar, err)
		return
	}
	if err := s.checkAuthorize(ar); err != nil {
		s.authorizeError(ctx, w, ar, err)
		return
	}
	person, ok := s.opts.People.Current(r)
	if !ok {
		http.Redirect(w, r, s.opts.People.SignInURL("/authorize?"+authorizeParams(r.Form).Encode()), http.StatusSeeOther)
		return
	}
	c, err := s.opts.LookupClient(ctx, ar.GetClient().GetID())
	if err != nil {
		s.authorizeError(ctx, w, ar, fosite.ErrServerError.WithWrap(err).WithDebug(err.Error()))
		return
	}
	live, err := s.liveConnection(ctx, person, c.ID)
	if err != nil {
		s.authorizeError(ctx, w, ar, fosite.ErrServerError.WithWrap(err).WithDebug(err.Error()))
		return
	}
	// A GET, or a POST that is the authorization request itself (RFC 6749
	// allows it), shows the consent page; only a decision changes anything.
	if r.Method != http.MethodPost || !r.PostForm.Has(fieldDecision) {
		s.consentPage(ctx, w, r, ar, c, person, live, nil, http.StatusOK)
		return
	}
	if !s.opts.People.CheckCSRF(r, person) {
		s.errorPage(w, http.StatusForbidden, "This form has expired or did not come from this site: go back to the client and connect again.")
		return
	}
	switch r.PostForm.Get(fieldDecision) {
	case "deny":
		s.authorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The person declined the connection."))
		return
	case "approve":
	default:
		s.consentPage(ctx, w, r, ar, c, person, live, errors.New("choose Approve or Deny"), http.StatusBadRequest)
		return
	}
	offered := offeredScopes(ar, live)
	var scopes []string
	for _, sc := range r.PostForm[fieldScope] {
		if slices.Contains(offered, sc) && !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	if len(scopes) == 0 {
		s.consentPage(ctx, w, r, ar, c, person, live, errors.New("scopes: tick at least one, or choose Deny"), http.StatusBadRequest)
		return
	}
	notes, err := s.chosen(ctx, person.User.Workspace, store.TypeNote, r.PostForm, fieldNotesMode, fieldNotes)
	if err == nil {
		var rooms []string
		rooms, err = s.chosen(ctx, person.User.Workspace, store.TypeRoom, r.PostForm, fieldRoomsMode, fieldRooms)
		if err == nil {
			s.approve(ctx, w, ar, c, person, scopes, notes, rooms)
			return
		}
	}
	var bad badChoice
	if errors.As(err, &bad) {
		s.consentPage(ctx, w, r, ar, c, person, live, err, http.StatusBadRequest)
		return
	}
	s.authorizeError(ctx, w, ar, fosite.ErrServerError.WithWrap(err).WithDebug(err.Error()))
}

// noState stands in for a missing state while fosite reads the request:
// fosite demands a state of at least 8 characters, OAuth 2.1 makes state
// optional when PKCE protects the flow (the TypeScript SDK sends none when
// its provider has none). It never leaves this server: the request's state
// is emptied again, and issWriter drops an empty state from the redirect.
const noState = "foundry-no-state"

// pkceS256 is whether the request carries a PKCE S256 challenge.
func pkceS256(form url.Values) bool {
	return form.Get("code_challenge") != "" && form.Get("code_challenge_method") == "S256"
}

// newAuthorizeRequest is fosite's, accepting a missing state when the
// request uses PKCE S256.
func (s *Server) newAuthorizeRequest(ctx context.Context, r *http.Request) (fosite.AuthorizeRequester, error) {
	if r.Form.Get("state") != "" || !pkceS256(r.Form) {
		return s.provider.NewAuthorizeRequest(ctx, r)
	}
	r2 := r.Clone(ctx)
	r2.Form = url.Values{}
	for k, v := range r.Form {
		r2.Form[k] = v
	}
	r2.Form.Set("state", noState)
	ar, err := s.provider.NewAuthorizeRequest(ctx, r2)
	if req, ok := ar.(*fosite.AuthorizeRequest); ok {
		req.State = ""
		req.Form.Del("state")
	}
	return ar, err
}

// checkAuthorize refuses, before any consent, what fosite would only refuse
// after it or does not check: PKCE other than S256, a resource other than
// the MCP endpoint, a response mode other than query.
func (s *Server) checkAuthorize(ar fosite.AuthorizeRequester) error {
	form := ar.GetRequestForm()
	if m := form.Get("response_mode"); m != "" && m != "query" {
		return fosite.ErrInvalidRequest.WithHint("response_mode: only query is supported; leave it out.")
	}
	if form.Get("code_challenge") == "" {
		return fosite.ErrInvalidRequest.WithHint("code_challenge: PKCE is required; send code_challenge and code_challenge_method=S256.")
	}
	if form.Get("code_challenge_method") != "S256" {
		return fosite.ErrInvalidRequest.WithHint("code_challenge_method: only S256 is accepted; plain is refused.")
	}
	return s.checkResource(form, true)
}

// offeredScopes is what the consent page offers: the scopes asked for and
// those the live connection already has (a client stepping up may ask only
// for the scope it lacks; what it had stays offered, ticked, so the new
// grant does not drop it), or when none is asked, every scope the client
// may have.
func offeredScopes(ar fosite.AuthorizeRequester, live *store.Connection) []string {
	var out []string
	for _, sc := range supportedScopes {
		if slices.Contains(ar.GetRequestedScopes(), sc) || (live != nil && len(ar.GetRequestedScopes()) > 0 && slices.Contains(live.Scopes, sc)) {
			out = append(out, sc)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, sc := range supportedScopes {
		if slices.Contains(ar.GetClient().GetScopes(), sc) {
			out = append(out, sc)
		}
	}
	return out
}

func (s *Server) liveConnection(ctx context.Context, p auth.Person, client string) (*store.Connection, error) {
	conns, err := s.st.Connections(ctx, p.User.Workspace)
	if err != nil {
		return nil, err
	}
	for i := range conns {
		c := conns[i]
		if c.User == p.User.ID && c.Client == client && c.RevokedAt == nil {
			return &c, nil
		}
	}
	return nil, nil
}

type badChoice struct{ msg string }

func (b badChoice) Error() string { return b.msg }

// chosen reads one grant of the consent form: nil for "all, now and
// later", or the listed IDs, each checked to be a resource of the
// workspace of that type.
func (s *Server) chosen(ctx context.Context, ws, typ string, form url.Values, modeField, idsField string) ([]string, error) {
	what := map[string]string{store.TypeNote: "Notes", store.TypeRoom: "Rooms"}[typ]
	switch form.Get(modeField) {
	case "all":
		return nil, nil
	case "list":
	default:
		return nil, badChoice{fmt.Sprintf("%s: choose all %s or a list", strings.ToLower(what), what)}
	}
	ids := []string{}
	if len(form[idsField]) > maxChosen {
		return nil, badChoice{fmt.Sprintf("%s: at most %d can be listed; choose all %s instead", strings.ToLower(what), maxChosen, what)}
	}
	for _, id := range form[idsField] {
		if id == "" || slices.Contains(ids, id) {
			continue
		}
		if len(id) > 200 {
			return nil, badChoice{fmt.Sprintf("%s: %q is not an ID", strings.ToLower(what), id[:40]+"…")}
		}
		res, err := s.st.Head(ctx, typ, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (res.Workspace != ws || res.Type != typ)) {
			return nil, badChoice{fmt.Sprintf("%s: %s is not one of this workspace's %s; reload the page and choose again", strings.ToLower(what), id, what)}
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (s *Server) approve(ctx context.Context, w http.ResponseWriter, ar fosite.AuthorizeRequester, c store.Client, p auth.Person, scopes, notes, rooms []string) {
	conn, err := s.st.PutConnection(ctx, store.Connection{
		ID: store.NewID("conn"), Workspace: p.User.Workspace, User: p.User.ID, Client: c.ID,
		Scopes: scopes, Notes: notes, Rooms: rooms, CreatedAt: s.now().UTC(),
	})
	if err != nil {
		s.authorizeError(ctx, w, ar, fosite.ErrServerError.WithWrap(err).WithDebug(err.Error()))
		return
	}
	for _, sc := range scopes {
		ar.GrantScope(sc)
	}
	ar.GrantAudience(s.opts.Resource)
	sess := &session{Workspace: p.User.Workspace, User: p.User.ID, Connection: conn.ID}
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, sess)
	if err != nil {
		s.authorizeError(ctx, w, ar, err)
		return
	}
	s.provider.WriteAuthorizeResponse(ctx, issWriter{w, s.issuer}, ar, resp)
}

// authorizeError redirects the error to the client with iss, or, when the
// client or its redirect URI is not known to be the client's, shows an
// error page: an authorization server never redirects to an unregistered
// URI.
func (s *Server) authorizeError(ctx context.Context, w http.ResponseWriter, ar fosite.AuthorizeRequester, err error) {
	rfc := fosite.ErrorToRFC6749Error(err)
	if rfc.CodeField >= 500 {
		s.log.ErrorContext(ctx, "oauth: authorize", "err", err, "debug", rfc.DebugField)
	} else {
		reqlog.NoteRefusal(w, reqlog.DoorOAuth, rfc.ErrorField)
	}
	if ar == nil || !ar.IsRedirectURIValid() {
		msg := rfc.ErrorField + ": " + rfc.GetDescription()
		if doc := (*clients.DocumentError)(nil); errors.As(err, &doc) {
			msg = rfc.ErrorField + ": This client's metadata document cannot be used, so it cannot connect: " + doc.Error()
		} else if rfc.ErrorField == fosite.ErrInvalidClient.ErrorField && errors.Is(err, fosite.ErrNotFound) {
			msg = rfc.ErrorField + ": Foundry does not know the application that sent you here: its client_id is not registered. The application registers itself when it connects; or the server's operator adds it with foundry client add."
		}
		s.errorPage(w, rfc.CodeField, msg)
		return
	}
	s.provider.WriteAuthorizeError(ctx, issWriter{w, s.issuer}, ar, err)
}

func (s *Server) errorPage(w http.ResponseWriter, code int, msg string) {
	if code < 400 || code > 599 {
		code = http.StatusBadRequest
	}
	// "code: description" shows the description, and the OAuth error
	// code apart, for whoever fixes the client.
	v := struct{ Text, Code string }{Text: msg}
	if c, d, ok := strings.Cut(msg, ": "); ok && c != "" && strings.Trim(c, "abcdefghijklmnopqrstuvwxyz_") == "" {
		v.Text, v.Code = d, c
	}
	account.Render(w, code, "This connection cannot go on", errorBody, v)
}

type choice struct {
	ID, Title string
	Checked   bool
}

type scopeChoice struct {
	Name, Label string
	Checked     bool
	New         bool
}

type consentView struct {
	ClientName, ClientID string
	RedirectHost         string
	HostWarning          string
	Scopes               []scopeChoice
	Hidden               []kv
	CSRFField, CSRF      string
	Person               string
	NotesAll, RoomsAll   bool
	Notes, Rooms         []choice
	More                 string
	Error                string
	Step                 bool
}

type kv struct{ K, V string }

func (s *Server) consentPage(ctx context.Context, w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, c store.Client, p auth.Person, live *store.Connection, problem error, code int) {
	v := consentView{
		ClientName: c.Name, ClientID: c.ID, CSRFField: auth.CSRFField, CSRF: p.Session.CSRF,
		Person: p.User.Email, NotesAll: true, RoomsAll: true,
	}
	if v.ClientName == "" {
		v.ClientName = c.ID
	}
	if ru := ar.GetRedirectURI(); ru != nil {
		v.RedirectHost = ru.Host
		if v.RedirectHost == "" {
			v.RedirectHost = ru.Scheme + ":"
		}
		if id, err := url.Parse(c.ID); err == nil && id.Scheme == "https" && id.Host != "" && !strings.EqualFold(id.Hostname(), ru.Hostname()) {
			v.HostWarning = fmt.Sprintf("This client is published at %s but sends you back to %s. Approve only if you started this from a client you trust.", id.Hostname(), v.RedirectHost)
		}
	}
	if problem != nil {
		v.Error = problem.Error()
	}
	labels := map[string]string{auth.ScopeRead: "Read Notes and Rooms", auth.ScopeWrite: "Edit Notes and propose Room changes"}
	for _, sc := range offeredScopes(ar, live) {
		ch := scopeChoice{Name: sc, Label: labels[sc], Checked: true}
		if live != nil && !slices.Contains(live.Scopes, sc) {
			ch.New, v.Step = true, true
		}
		v.Scopes = append(v.Scopes, ch)
	}
	var noteGrant, roomGrant []string
	if live != nil {
		noteGrant, roomGrant = live.Notes, live.Rooms
		v.NotesAll, v.RoomsAll = live.Notes == nil, live.Rooms == nil
	}
	list := func(typ string, grant []string, approved bool) []choice {
		q := store.ListQuery{Workspace: p.User.Workspace, Type: typ, ApprovedOnly: approved, Limit: listLimit}
		if typ == store.TypeRoom {
			q.Unmarked = store.KindRoomDeleted // a deleted Room keeps its row, marked by an object
		}
		rs, err := s.st.List(ctx, q)
		if err != nil {
			s.log.WarnContext(ctx, "oauth: consent list", "type", typ, "err", err)
			return nil
		}
		if len(rs) == listLimit {
			v.More = fmt.Sprintf("Only the first %d are listed; choose all to include the rest.", listLimit)
		}
		out := make([]choice, 0, len(rs))
		for _, res := range rs {
			t := res.Title
			if t == "" {
				t = res.ID
			}
			out = append(out, choice{ID: res.ID, Title: t, Checked: grant != nil && slices.Contains(grant, res.ID)})
		}
		return out
	}
	v.Notes = list(store.TypeNote, noteGrant, true)
	v.Rooms = list(store.TypeRoom, roomGrant, false)
	params := authorizeParams(r.Form)
	for k, vals := range params {
		for _, val := range vals {
			v.Hidden = append(v.Hidden, kv{k, val})
		}
	}
	slices.SortFunc(v.Hidden, func(a, b kv) int { return strings.Compare(a.K, b.K) })
	// The decision redirects the browser to the client: the page's
	// form-action must allow the redirect URI's origin, or the browser
	// stops there.
	var targets []string
	if ru := ar.GetRedirectURI(); ru != nil {
		targets = append(targets, ru.String())
	}
	account.RenderWithPolicy(w, code, account.PolicyWithFormTargets(targets...), "Connect "+v.ClientName, consentBody, v)
}

// errorBody and consentBody are rendered inside the sign-in pages' layout
// and stylesheet (account.Render).
var errorBody = template.Must(template.New("error").Parse(`<p class="error detail" role="alert">{{.Text}}</p>
{{if .Code}}<p class="hint">Error code: <code>{{.Code}}</code></p>
{{end}}<p class="hint">Nothing was connected. Go back to the application you were connecting and start again; if this keeps happening, its settings for Foundry may be wrong.</p>
`))

var consentBody = template.Must(template.New("consent").Parse(`<p class="lead">This application asks to reach your Foundry workspace. Choose what it may do and what it may reach; it gets nothing more.</p>
<dl class="facts">
<dt>Client</dt><dd><code>{{.ClientID}}</code></dd>
<dt>Sends you back to</dt><dd><strong>{{.RedirectHost}}</strong></dd>
<dt>Signed in as</dt><dd>{{.Person}}</dd>
</dl>
{{if .HostWarning}}<p class="warn" role="alert">{{.HostWarning}}</p>{{end}}
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .Step}}<p class="notice">This client is already connected and now asks for more than it has: the scopes marked <span class="new">new</span> are not granted yet.</p>{{end}}
<form method="post" action="/authorize">
{{range .Hidden}}<input type="hidden" name="{{.K}}" value="{{.V}}">
{{end}}<input type="hidden" name="{{.CSRFField}}" value="{{.CSRF}}">
<fieldset>
<legend>What it may do</legend>
{{range .Scopes}}<label class="choice"><input type="checkbox" name="consent_scope" value="{{.Name}}"{{if .Checked}} checked{{end}}><span><span class="what">{{.Label}}{{if .New}} <span class="new">new</span>{{end}}</span><code>{{.Name}}</code></span></label>
{{end}}</fieldset>
<fieldset>
<legend>Notes it may reach</legend>
<label class="choice"><input type="radio" name="consent_notes_mode" value="all"{{if .NotesAll}} checked{{end}}><span class="what">All approved Notes, now and later</span></label>
<label class="choice"><input type="radio" name="consent_notes_mode" value="list"{{if not .NotesAll}} checked{{end}}><span class="what">Only these:</span></label>
<div class="list">{{range .Notes}}<label class="choice"><input type="checkbox" name="consent_notes" value="{{.ID}}"{{if .Checked}} checked{{end}}><span>{{.Title}}</span></label>
{{else}}<p class="hint">No approved Notes yet.</p>{{end}}</div>
</fieldset>
<fieldset>
<legend>Rooms it may reach</legend>
<label class="choice"><input type="radio" name="consent_rooms_mode" value="all"{{if .RoomsAll}} checked{{end}}><span class="what">All Rooms, now and later</span></label>
<label class="choice"><input type="radio" name="consent_rooms_mode" value="list"{{if not .RoomsAll}} checked{{end}}><span class="what">Only these:</span></label>
<div class="list">{{range .Rooms}}<label class="choice"><input type="checkbox" name="consent_rooms" value="{{.ID}}"{{if .Checked}} checked{{end}}><span>{{.Title}}</span></label>
{{else}}<p class="hint">No Rooms yet.</p>{{end}}</div>
</fieldset>
{{if .More}}<p class="hint">{{.More}}</p>{{end}}
<div class="actions">
<button type="submit" name="consent_decision" value="approve">Approve</button>
<button type="submit" name="consent_decision" value="deny" class="secondary">Deny</button>
</div>
<p class="hint">You can revoke this connection at any time with <code>foundry connections revoke</code>; the client is then refused on its next call.</p>
</form>
`))
