// Command authproxy forwards every request to a target server, adding
// "Authorization: Bearer <token>" to those that carry no Authorization
// header, and keeping the request's own Host and Origin. The conformance
// script puts it before Foundry: the suites send no credentials, and a
// Foundry session needs them (initialize without a token is 401).
package main

import (
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "loopback address to listen on")
	target := flag.String("target", "", "the server's base URL, e.g. http://127.0.0.1:8080")
	tokenFile := flag.String("token-file", "", "file whose first line is the bearer token")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" {
		log.Fatalf("authproxy: --target %q is not a URL: give the server's base URL", *target)
	}
	raw, err := os.ReadFile(*tokenFile)
	token := strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil || token == "" {
		log.Fatalf("authproxy: --token-file %q: no token in it (%v)", *tokenFile, err)
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
			if len(pr.In.Header.Values("Authorization")) == 0 {
				pr.Out.Header.Set("Authorization", "Bearer "+token)
			}
		},
		FlushInterval: -1, // event streams pass through as they come
		// A fresh connection to the target for every request: the suites
		// open and drop connections scenario by scenario, and a pooled
		// upstream connection closed under a later request would make
		// that request fail for the proxy's sake, not the server's.
		Transport: &http.Transport{DisableKeepAlives: true},
		ErrorLog:  log.New(os.Stderr, "authproxy: ", log.LstdFlags),
	}
	log.Fatal(http.ListenAndServe(*addr, p))
}
