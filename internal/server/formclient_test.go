package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// browser is a person at a browser without JavaScript: it keeps cookies,
// follows redirects on the server, stops at any other host or at a
// redirect to stopAt (an OAuth client's redirect URI), and submits the
// pages' real forms with their hidden fields (CSRF tokens included).
type browser struct {
	t      testing.TB
	c      *http.Client
	stopAt string
}

func newBrowser(t testing.TB, stopAt string) *browser {
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, stopAt: stopAt}
	b.c = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > 10 {
			return fmt.Errorf("more than 10 redirects")
		}
		if b.stopAt != "" && strings.HasPrefix(req.URL.String(), b.stopAt) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return b
}

// page is a fetched HTML page (or the redirect that ended a walk).
type page struct {
	URL      *url.URL
	Status   int
	Location string // set when the walk stopped at stopAt
	Body     string
	doc      *html.Node
}

func (b *browser) do(req *http.Request) *page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	p := &page{URL: res.Request.URL, Status: res.StatusCode, Location: res.Header.Get("Location"), Body: string(raw)}
	p.doc, _ = html.Parse(strings.NewReader(p.Body))
	return p
}

func (b *browser) get(u string) *page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// submit fills the page's form that has a submit button named button (or
// with that value; "" takes the first form) with fields over its own
// inputs, and posts it as a browser would (Origin of the page).
func (b *browser) submit(p *page, button string, fields map[string]string) *page {
	b.t.Helper()
	form, values := p.form(button)
	if form == nil {
		b.t.Fatalf("no form with button %q on %s (status %d):\n%s", button, p.URL, p.Status, p.Body)
	}
	for k, v := range fields {
		if v == "\x00" {
			values.Del(k)
			continue
		}
		values.Set(k, v)
	}
	action, _ := url.Parse(attr(form, "action"))
	target := p.URL.ResolveReference(action)
	req, err := http.NewRequest(http.MethodPost, target.String(), strings.NewReader(values.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.URL.Scheme+"://"+p.URL.Host)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// form finds the form and the values a browser would send: text and
// hidden inputs, checked boxes, and the clicked button's name=value.
func (p *page) form(button string) (*html.Node, url.Values) {
	var forms []*html.Node
	walk(p.doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "form" {
			forms = append(forms, n)
		}
	})
	for _, f := range forms {
		values := url.Values{}
		var clicked bool
		walk(f, func(n *html.Node) {
			if n.Type != html.ElementNode {
				return
			}
			name := attr(n, "name")
			switch n.Data {
			case "input":
				switch strings.ToLower(attr(n, "type")) {
				case "checkbox", "radio":
					if hasAttr(n, "checked") && name != "" {
						values.Add(name, valueOr(n, "on"))
					}
				case "submit", "button", "image":
				default:
					if name != "" {
						values.Add(name, attr(n, "value"))
					}
				}
			case "button":
				if button == "" && !clicked && strings.ToLower(attr(n, "type")) != "button" {
					clicked = true
					if name != "" {
						values.Set(name, attr(n, "value"))
					}
				} else if button != "" && (name == button || attr(n, "value") == button) {
					clicked = true
					if name != "" {
						values.Set(name, attr(n, "value"))
					}
				}
			}
		})
		if clicked {
			return f, values
		}
	}
	return nil, nil
}

func walk(n *html.Node, fn func(*html.Node)) {
	if n == nil {
		return
	}
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func valueOr(n *html.Node, def string) string {
	if hasAttr(n, "value") {
		return attr(n, "value")
	}
	return def
}
