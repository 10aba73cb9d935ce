package account

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// StylesheetPath is where Mount serves the pages' one stylesheet.
const StylesheetPath = "/assets/account.css"

//go:embed account.css
var stylesheet []byte

// ContentSecurityPolicy is the policy of every people-facing page: nothing
// but this server's stylesheet loads, forms post only here, and no other
// site may frame the page.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'"

// PolicyWithFormTargets is ContentSecurityPolicy with form-action widened
// to the origins of targets, for a form whose answer redirects the browser
// elsewhere (browsers apply form-action to the redirects a form submission
// follows): OAuth consent sends the person back to the client. A target
// with an origin (http, https) adds that origin; another URL adds its
// scheme (a native client's own scheme); anything else, or a target that
// could not be written into the policy safely, adds nothing.
func PolicyWithFormTargets(targets ...string) string {
	extra := ""
	for _, t := range targets {
		if src := formSource(t); src != "" && !strings.Contains(extra, " "+src) {
			extra += " " + src
		}
	}
	if extra == "" {
		return ContentSecurityPolicy
	}
	return strings.Replace(ContentSecurityPolicy, "form-action 'self'", "form-action 'self'"+extra, 1)
}

// formSource is the CSP source expression of a URL: its origin, or its
// scheme; "" when it has neither or holds characters a policy cannot.
func formSource(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	src := scheme + ":"
	if scheme == "http" || scheme == "https" {
		if u.Host == "" {
			return ""
		}
		src = scheme + "://" + strings.ToLower(u.Host)
	}
	for _, r := range src {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("+-.:/[]", r)
		if !ok {
			return ""
		}
	}
	return src
}

// SetPageHeaders sets the headers every people-facing page carries: the
// content security policy, no framing, no caching, no sniffing.
func SetPageHeaders(h http.Header) {
	setPageHeaders(h, ContentSecurityPolicy)
}

func setPageHeaders(h http.Header, policy string) {
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "same-origin")
}

var layout = template.Must(template.New("layout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Foundry</title>
<link rel="stylesheet" href="` + StylesheetPath + `">
</head>
<body>
<main>
{{if eq .Title "Foundry"}}<h1 class="brand-title"><span class="mark" aria-hidden="true"></span>Foundry</h1>
{{else}}<p class="brand"><span class="mark" aria-hidden="true"></span>Foundry</p>
<h1>{{.Title}}</h1>
{{end}}
{{.Body}}
</main>
</body>
</html>
`))

// Page writes a whole people-facing page with status: the shared layout
// (the stylesheet, a heading with title) around body, with SetPageHeaders.
// title is escaped; body is trusted HTML, so build it with html/template
// (e.g. execute a template into a bytes.Buffer and pass
// template.HTML(buf.String())). A form in body must carry the session's CSRF
// token in a hidden input named auth.CSRFField.
func Page(w http.ResponseWriter, status int, title string, body template.HTML) {
	PageWithPolicy(w, status, ContentSecurityPolicy, title, body)
}

// PageWithPolicy is Page with another content security policy (one from
// PolicyWithFormTargets).
func PageWithPolicy(w http.ResponseWriter, status int, policy, title string, body template.HTML) {
	var buf bytes.Buffer
	if err := layout.Execute(&buf, struct {
		Title string
		Body  template.HTML
	}{title, body}); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	setPageHeaders(w.Header(), policy)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// Render executes t with data and writes it with Page.
func Render(w http.ResponseWriter, status int, title string, t *template.Template, data any) {
	RenderWithPolicy(w, status, ContentSecurityPolicy, title, t, data)
}

// RenderWithPolicy is Render with another content security policy.
func RenderWithPolicy(w http.ResponseWriter, status int, policy, title string, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		Page(w, http.StatusInternalServerError, "Something went wrong", template.HTML(`<p class="error" role="alert">This page could not be rendered. Try again; if it keeps failing, the server's log says why.</p>`))
		return
	}
	PageWithPolicy(w, status, policy, title, template.HTML(buf.String()))
}

func serveStylesheet(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(stylesheet)
}

var signinPage = template.Must(template.New("signin").Parse(`{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/signin">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<input type="hidden" name="next" value="{{.Next}}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="{{.Email}}"{{if not .Email}} autofocus{{end}}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"{{if .Email}} autofocus{{end}}>
<button type="submit">Sign in</button>
</form>
<p class="hint">No password yet? Ask the workspace's owner for a one-time link, or run <code>foundry user passwd EMAIL</code> on the server.</p>
`))

var setupPage = template.Must(template.New("setup").Parse(`{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<p>Choose a password for <strong>{{.Email}}</strong>: 8 to 1024 bytes, no control characters.</p>
<form method="post" action="/setup">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<input type="hidden" name="token" value="{{.Token}}">
<input type="text" name="username" value="{{.Email}}" autocomplete="username" hidden>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" autofocus>
<label for="confirm">The same password again</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="8" maxlength="1024">
<button type="submit">Set password and sign in</button>
</form>
`))

var messagePage = template.Must(template.New("message").Parse(`<p{{if .Error}} class="error detail" role="alert"{{end}}>{{.Text}}</p>
{{if .Link}}<p><a href="{{.Link}}">{{.LinkText}}</a></p>{{end}}
`))

var homePage = template.Must(template.New("home").Parse(`<p>Signed in as <strong>{{.Name}}</strong> ({{.Email}}), {{.Role}} of this workspace.</p>
<form method="post" action="/signout">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<button type="submit" class="secondary">Sign out</button>
</form>
`))

type message struct {
	Text           string
	Error          bool
	Link, LinkText string
}
