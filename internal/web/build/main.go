// Command build writes the web app's bundle into internal/web/dist (see
// package bundle). Run it from internal/web, as go generate
// ./internal/web/... does; the packages come from web/node_modules (npm ci
// --prefix web).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"foundry/internal/web/bundle"
)

func main() {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err == nil {
		var wrote map[string]int
		if wrote, err = bundle.Build(root, filepath.Join(root, "internal", "web", "dist")); err == nil {
			names := make([]string, 0, len(wrote))
			for n := range wrote {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Printf("internal/web/dist/%s (%d bytes)\n", n, wrote[n])
			}
			return
		}
	}
	fmt.Fprintln(os.Stderr, "web build:", err)
	os.Exit(1)
}
