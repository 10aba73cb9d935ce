// Command baresdk serves a bare go-sdk server (no tools, prompts or
// resources, stateless Streamable HTTP) so the conformance script can
// measure what the SDK alone scores on the same scenarios as Foundry.
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "loopback address to listen on")
	flag.Parse()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "v1.8.0"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	log.Fatal(http.ListenAndServe(*addr, mux))
}
