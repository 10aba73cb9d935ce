// Command openapigen writes the OpenAPI document of Foundry's REST API,
// generated from its routes' types, to the file it is given (go generate
// ./internal/api runs it).
package main

import (
	"fmt"
	"os"

	"foundry/internal/api"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: openapigen FILE")
		os.Exit(2)
	}
	doc, err := api.Document()
	if err == nil {
		err = os.WriteFile(os.Args[1], doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}
