// Command foundry runs Foundry and manages its data: serve, token, migrate.
package main

import (
	"fmt"
	"os"
)

func main() { os.Exit(run(os.Args[1:])) }

const usage = `foundry — Notes and Rooms shared by people and AI agents

Usage:
  foundry serve   [--data DIR | --database URL] [--addr HOST:PORT] [--demo] …
  foundry token   create|list|revoke [--data DIR | --database URL] …
  foundry notes   list|create|approve|unapprove|history|restore …
  foundry rooms   list|create …
  foundry proposals list|show|approve|decline [ID] [--data DIR | --database URL]
  foundry repo    push DIR --name NAME [--data DIR | --database URL]
  foundry sim     [EXPERIMENT…] [--seed N] [--quick] [--check] [--url URL --token T | --database URL] [--out DIR]
  foundry migrate [--data DIR | --database URL]
  foundry version

Run "foundry COMMAND --help" for a command's flags.
`

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(args[1:])
	case "token":
		err = cmdToken(args[1:])
	case "notes":
		err = cmdNotes(args[1:])
	case "rooms":
		err = cmdRooms(args[1:])
	case "proposals":
		err = cmdProposals(args[1:])
	case "repo":
		err = cmdRepo(args[1:])
	case "sim":
		err = cmdSim(args[1:])
	case "migrate":
		err = cmdMigrate(args[1:])
	case "version", "--version":
		fmt.Println(version)
		return 0
	case "help", "-h", "--help":
		fmt.Print(usage)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "foundry: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if err == errUsage {
			return 2
		}
		fmt.Fprintln(os.Stderr, "foundry:", err)
		return 1
	}
	return 0
}
