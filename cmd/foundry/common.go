package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	"foundry/internal/problem"
	"foundry/internal/server"
	"foundry/internal/service"
)

var version = "0.1.0-dev"

// usageError is a command asked wrongly (a flag value it cannot take): the
// message is printed and the exit code is 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// shapeFields are the service's fields whose invalid values are a command
// given wrongly whatever the data holds: what is wrong is the value's
// shape (an unknown scope, an empty or too long name), not what it names.
var shapeFields = map[string]bool{"scopes": true, "notes": true, "rooms": true, "name": true, "title": true, "role": true, "limit": true, "database": true}

// givenWrongly reports whether err is the service refusing a value of
// shapeFields (exit 2, like a usageError), not a refusal of the act.
func givenWrongly(err error) bool {
	var p *problem.Problem
	if !errors.As(err, &p) || p.Code != problem.Invalid {
		return false
	}
	base, _, _ := strings.Cut(p.Field, "[")
	return shapeFields[base]
}

// flagNames are the names of flags in the flag package's errors (it writes
// them with one dash).
var flagNames = regexp.MustCompile(`(^|\s)-([A-Za-z0-9][-A-Za-z0-9_]*)`)

// flagError is an error of the flag package said as this command's help
// says flags: with two dashes, and a value's fault in words.
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return fmt.Sprintf("there is no flag --%s", strings.TrimLeft(name, "-"))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("--%s needs a value", strings.TrimLeft(name, "-"))
	}
	// invalid value "abc" for flag -version: parse error
	// invalid boolean value "x" for -y: parse error
	if m := regexp.MustCompile(`^invalid (boolean )?value (".*") for (?:flag )?-(\S+): (.*)$`).FindStringSubmatch(msg); m != nil {
		switch why := m[4]; {
		case m[1] != "":
			return fmt.Sprintf("--%s: %s is not true or false", m[3], m[2])
		case why == "parse error":
			return fmt.Sprintf("--%s: %s is not a number", m[3], m[2])
		case why == "value out of range":
			return fmt.Sprintf("--%s: %s is out of range", m[3], m[2])
		default:
			return fmt.Sprintf("--%s: %s: %s", m[3], m[2], flagNames.ReplaceAllString(why, "$1--$2"))
		}
	}
	return flagNames.ReplaceAllString(msg, "$1--$2")
}

// dataFlags are the flags of every command that opens data.
type dataFlags struct {
	data, database string
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.data, "data", envOr("FOUNDRY_DATA", "./foundry-data"), "data folder for the embedded SQLite database (env FOUNDRY_DATA)")
	fs.StringVar(&d.database, "database", os.Getenv("FOUNDRY_DATABASE_URL"), "postgres:// URL; when set, data lives in PostgreSQL instead of --data (env FOUNDRY_DATABASE_URL)")
}

func (d *dataFlags) config() server.Config {
	return server.Config{DataDir: d.data, Database: d.database}
}

// arg is how the data flags are typed again in a printed command.
func (d *dataFlags) arg() string {
	if d.database != "" {
		return `--database "$FOUNDRY_DATABASE_URL"`
	}
	return "--data " + shellQuote(d.data)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// parse parses flags, allowing them before and after positional arguments
// (`foundry token revoke ID --data DIR`), and returns the positional
// arguments. -h, -help and --help give flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// withWorkspace opens the data and finds the workspace and its owner, the
// person every CLI act is done as.
func withWorkspace(d dataFlags, fn func(ctx context.Context, svc *service.Service, o service.Owner) error) error {
	ctx := context.Background()
	st, err := server.OpenStore(ctx, d.config())
	if err != nil {
		return err
	}
	defer st.Close()
	svc := service.New(st)
	o, err := svc.FirstWorkspace(ctx)
	if errors.Is(err, service.ErrNoWorkspace) {
		where := "the data folder " + d.data
		if d.database != "" {
			where = "this PostgreSQL database"
		}
		return fmt.Errorf("%s has no workspace yet: start the server once with `%s serve %s` to create it (or pass the --data you serve with)", where, self, d.arg())
	}
	if err != nil {
		return err
	}
	return fn(ctx, svc, o)
}

func migrateFlags(fs *flag.FlagSet) func([]string) error {
	var d dataFlags
	d.register(fs)
	return func([]string) error {
		st, err := server.OpenStore(context.Background(), d.config())
		if err != nil {
			return err
		}
		defer st.Close()
		fmt.Println("migrations applied")
		return nil
	}
}
