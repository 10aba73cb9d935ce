package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"foundry/internal/server"
	"foundry/internal/service"
)

var version = "0.1.0-dev"

// usageError is a command asked wrongly (a flag value it cannot take): the
// message is printed and the exit code is 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

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
