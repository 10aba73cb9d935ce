// Command foundry runs Foundry and manages its data: serve, user, token,
// notes, rooms, proposals, repo, sim, migrate. It only turns flags and
// environment into calls of internal/server, internal/service and
// internal/account, and prints their answers in its own words.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"foundry/internal/service"
)

func main() {
	self = invokedAs(os.Args[0])
	os.Exit(run(os.Args[1:]))
}

// command is one command or subcommand: where it sits, what it takes, and
// what it does. Every dispatch and every --help comes from the commands
// table, so a new command cannot be left without its help.
type command struct {
	path  string // "token create"
	args  string // positional arguments, e.g. "TOKEN_ID"
	nargs int    // how many positional arguments it takes; -1: any number
	about string // one line for the lists
	long  string // more help, shown by --help (optional)
	// flags registers the command's flags on fs and returns what runs it
	// with the positional arguments.
	flags func(fs *flag.FlagSet) func(args []string) error
}

// commands is every command, in the order the usage lists them. It is
// filled in init so the entries can refer to their own functions.
var commands []command

func init() {
	commands = []command{
		{path: "serve", about: "run the server: MCP at /mcp; creates the workspace on first start", long: serveLong, flags: serveFlags},
		{path: "user add", args: "EMAIL", nargs: 1, about: "add a person who signs in to Foundry's pages (prints a one-time link to set a password)", long: userAddLong, flags: userAddFlags},
		{path: "user passwd", args: "EMAIL", nargs: 1, about: "set a person's password: a one-time link, or --password-stdin", long: userPasswdLong, flags: userPasswdFlags},
		{path: "user list", about: "list the people of the workspace, their roles and whether they have a password", flags: userListFlags},
		{path: "user role", args: "EMAIL ROLE", nargs: 2, about: "give a person the role member or owner (the last owner stays one)", flags: userRoleFlags},
		{path: "user remove", args: "EMAIL", nargs: 1, about: "remove a person: their sessions and tokens end, their connections are revoked", flags: userRemoveFlags},
		{path: "token create", about: "create a token for an MCP client (the secret is shown once)", flags: tokenCreateFlags},
		{path: "token list", about: "list tokens with their scopes, Notes and Rooms", flags: tokenListFlags},
		{path: "token revoke", args: "TOKEN_ID", nargs: 1, about: "revoke a token: it stops working at once", flags: tokenRevokeFlags},
		{path: "client add", about: "register an OAuth client ahead (one that cannot register itself)", long: clientAddLong, flags: clientAddFlags},
		{path: "client list", about: "list the OAuth clients known to the server", flags: clientListFlags},
		{path: "client remove", args: "CLIENT_ID", nargs: 1, about: "remove an OAuth client and revoke its connections", flags: clientRemoveFlags},
		{path: "connections list", about: "list connected MCP clients and tokens: scopes, Notes, Rooms, last use", flags: connectionsListFlags},
		{path: "connections revoke", args: "ID", nargs: 1, about: "revoke a connected client or a token: every node refuses it within a second", flags: connectionsRevokeFlags},
		{path: "notes list", about: "list every Note of the workspace, connected or not", flags: notesListFlags},
		{path: "notes create", about: "create a Note", flags: notesCreateFlags},
		{path: "notes approve", args: "NOTE_ID", nargs: 1, about: "switch on connected access: agents can reach the Note", flags: notesApproveFlags(true)},
		{path: "notes unapprove", args: "NOTE_ID", nargs: 1, about: "switch off connected access", flags: notesApproveFlags(false)},
		{path: "notes history", args: "NOTE_ID", nargs: 1, about: "list a Note's versions, newest first, a page at a time: when, by whom, what changed", flags: notesHistoryFlags},
		{path: "notes restore", args: "NOTE_ID", nargs: 1, about: "make an old version current again (the restore is itself a new version)", flags: notesRestoreFlags},
		{path: "notes rename", args: "NOTE_ID TITLE", nargs: 2, about: "give a Note a new title", flags: notesRenameFlags},
		{path: "notes duplicate", args: "NOTE_ID", nargs: 1, about: "copy a Note (tabs, content, files) into a new Note \"Copy of TITLE\"; prints its ID", flags: notesDuplicateFlags},
		{path: "notes delete", args: "NOTE_ID", nargs: 1, about: fmt.Sprintf("move a Note to the trash: gone from every list and agent, restorable for %d days", service.TrashDays), flags: notesDeleteFlags},
		{path: "notes trash", about: "list the deleted Notes the trash keeps, with when each is removed for good", flags: notesTrashFlags},
		{path: "notes untrash", args: "NOTE_ID", nargs: 1, about: "restore a Note from the trash as it was when deleted", flags: notesUntrashFlags},
		{path: "export", args: "OUT", nargs: 1, about: "write a Note (--note ID) or every Note (--all) into a folder or a .zip: markdown, CSV, JSON and the files", long: exportLong, flags: exportFlags},
		{path: "import", args: "ARCHIVE", nargs: 1, about: "read an export (folder or .zip) back into new Notes; prints their IDs", long: importLong, flags: importFlags},
		{path: "rooms list", about: "list the workspace's cloud Rooms", flags: roomsListFlags},
		{path: "rooms create", about: "create a cloud Room (prints its ID)", flags: roomsCreateFlags},
		{path: "rooms rename", args: "ROOM_ID", nargs: 1, about: "rename a cloud Room", flags: roomsRenameFlags},
		{path: "rooms delete", args: "ROOM_ID", nargs: 1, about: "delete a cloud Room: its apps stop, its pending proposals are declined", flags: roomsDeleteFlags},
		{path: "proposals list", about: "list the apps agents proposed for Rooms", flags: proposalsListFlags},
		{path: "proposals show", args: "PROPOSAL_ID", nargs: 1, about: "show a proposal with all its files, to review it", flags: proposalsShowFlags},
		{path: "proposals approve", args: "PROPOSAL_ID", nargs: 1, about: "approve a proposal: the app goes into the Room's launcher", flags: proposalsDecideFlags(true)},
		{path: "proposals decline", args: "PROPOSAL_ID", nargs: 1, about: "decline a proposal: the app never reaches the launcher", flags: proposalsDecideFlags(false)},
		{path: "repo push", args: "DIR", nargs: 1, about: "pin the files of a folder as a new version of a repository", flags: repoPushFlags},
		{path: "sim", args: "[EXPERIMENT…]", nargs: -1, about: "reproduce the seeds' measurements against a real server", long: simLong(), flags: simFlags},
		{path: "migrate", about: "apply the database migrations and exit", flags: migrateFlags},
		{path: "backup", args: "OUT", nargs: 1, about: "copy a SQLite data folder while the server runs into OUT (a folder, or a .tar.gz), checked, with a manifest", long: backupLong, flags: backupFlags},
		{path: "restore", args: "BACKUP", nargs: 1, about: "check a backup and restore it into a new data folder (--data)", long: restoreLong, flags: restoreFlags},
		{path: "version", about: "print the version", flags: func(*flag.FlagSet) func([]string) error {
			return func([]string) error { fmt.Println(version); return nil }
		}},
	}
}

// lookup finds the command that args start with and the arguments that
// follow it; group is set when args name a group ("token") but none of its
// subcommands.
func lookup(args []string) (c *command, rest []string, group string) {
	if len(args) >= 2 {
		if c := find(args[0] + " " + args[1]); c != nil {
			return c, args[2:], ""
		}
	}
	if c := find(args[0]); c != nil {
		return c, args[1:], ""
	}
	if len(subcommands(args[0])) > 0 {
		return nil, args[1:], args[0]
	}
	return nil, nil, ""
}

func find(path string) *command {
	for i := range commands {
		if commands[i].path == path {
			return &commands[i]
		}
	}
	return nil
}

// subcommands lists the commands of group ("token": create, list, revoke).
func subcommands(group string) []*command {
	var out []*command
	for i := range commands {
		if g, _, ok := strings.Cut(commands[i].path, " "); ok && g == group {
			out = append(out, &commands[i])
		}
	}
	return out
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

func run(args []string) (code int) {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage())
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Print(usage())
		return 0
	case "--version", "-version":
		fmt.Println(version)
		return 0
	case "help": // foundry help [COMMAND [SUBCOMMAND]]
		if len(args) == 1 {
			fmt.Print(usage())
			return 0
		}
		return run(append(args[1:], "--help"))
	}
	c, rest, group := lookup(args)
	switch {
	case group != "" && (len(rest) == 0 || isHelp(rest[0])):
		if len(rest) == 0 {
			fmt.Fprint(os.Stderr, groupHelp(group))
			return 2
		}
		fmt.Print(groupHelp(group))
		return 0
	case group != "":
		fmt.Fprintf(os.Stderr, "%s %s: unknown subcommand %q\n\n%s", self, group, rest[0], groupHelp(group))
		return 2
	case c == nil:
		fmt.Fprintf(os.Stderr, "%s: unknown command %q\n\n%s", self, args[0], usage())
		return 2
	}
	return c.run(rest)
}

// run parses the command's flags and runs it: 0 when it did what it was
// asked, 1 when it failed, 2 when it was asked wrongly.
func (c *command) run(args []string) int {
	fs := flag.NewFlagSet(self+" "+c.path, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // its errors are said below, with two dashes
	do := c.flags(fs)
	fs.Usage = func() {} // help and errors are printed below, where they belong
	pos, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.help(os.Stdout, fs)
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", self, c.path, flagError(err))
		fmt.Fprintf(os.Stderr, "%s\nRun \"%s %s --help\" for its flags.\n", c.synopsis(), self, c.path)
		return 2
	}
	if c.nargs >= 0 && len(pos) != c.nargs {
		switch {
		case len(pos) == 0:
			fmt.Fprintf(os.Stderr, "%s %s needs %s\n", self, c.path, c.args)
		case c.nargs == 0:
			fmt.Fprintf(os.Stderr, "%s %s takes no arguments (got %s)\n", self, c.path, strings.Join(quoteAll(pos), " "))
		default:
			fmt.Fprintf(os.Stderr, "%s %s takes %s only (got %s)\n", self, c.path, c.args, strings.Join(quoteAll(pos), " "))
		}
		fmt.Fprintf(os.Stderr, "%s\nRun \"%s %s --help\" for its flags.\n", c.synopsis(), self, c.path)
		return 2
	}
	err = do(pos)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", self, c.path, ue.msg)
		return 2
	case givenWrongly(err):
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", self, c.path, say(err))
		return 2
	}
	fmt.Fprintf(os.Stderr, "%s %s: %s\n", self, c.path, say(err))
	return 1
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

func (c *command) synopsis() string {
	s := "usage: " + self + " " + c.path
	if c.args != "" {
		s += " " + c.args
	}
	return s + " [flags]"
}

// help is the command's --help: what it does and only its own flags.
func (c *command) help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n%s%s.\n", c.synopsis(), strings.ToUpper(c.about[:1]), c.about[1:])
	if c.long != "" {
		fmt.Fprintf(w, "\n%s", strings.ReplaceAll(c.long, "foundry ", self+" "))
		if !strings.HasSuffix(c.long, "\n") {
			fmt.Fprintln(w)
		}
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintln(w, "\nIt takes no flags.")
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	printFlags(w, fs)
}

// argNames are the placeholders of flags whose value is not named well by
// its flag's name.
var argNames = map[string]string{
	"data": "DIR", "out": "DIR", "database": "URL", "url": "URL", "public-url": "URL", "addr": "HOST:PORT",
	"allowed-origins": "ORIGINS", "memory-limit": "SIZE", "log-level": "LEVEL", "sync": "MODE", "room": "ROOM_ID", "note": "NOTE_ID",
	"cursor": "CURSOR", "limit": "N",
}

// printFlags lists fs's flags as "--name VALUE" with their usage and
// default. (flag.PrintDefaults would take any quoted text in a usage for
// the value's name.)
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		line := "  --" + f.Name
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
			arg, ok := argNames[f.Name]
			if !ok {
				arg = "VALUE"
				if t, _ := flag.UnquoteUsage(f); t == "int" || t == "uint" || t == "float" {
					arg = "N"
				} else if t == "string" {
					arg = strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
				}
			}
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n      %s", line, f.Usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

func groupHelp(group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s %s SUBCOMMAND [flags]\n\nSubcommands:\n", self, group)
	for _, c := range subcommands(group) {
		fmt.Fprintf(&b, "  %-34s %s\n", c.path+" "+c.args, c.about)
	}
	fmt.Fprintf(&b, "\nRun \"%s %s SUBCOMMAND --help\" for its flags.\n", self, group)
	return b.String()
}

func usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "foundry — Notes and Rooms shared by people and AI agents\n\nUsage: %s COMMAND [flags]\n\nCommands:\n", self)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-34s %s\n", c.path+" "+c.args, c.about)
	}
	fmt.Fprintf(&b, "\nRun \"%s COMMAND --help\" for a command's flags (e.g. \"%s token create --help\").\n", self, self)
	return b.String()
}

// groups lists the groups of subcommands ("notes", "proposals", …).
func groups() []string {
	var out []string
	for _, c := range commands {
		if g, _, ok := strings.Cut(c.path, " "); ok && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}
