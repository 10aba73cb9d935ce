package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"foundry/internal/server"
	"foundry/internal/store"
)

var version = "0.1.0-dev"

var errUsage = errors.New("usage")

// dataFlags are the flags of every command that opens data.
type dataFlags struct {
	data, database string
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.data, "data", envOr("FOUNDRY_DATA", "./foundry-data"), "data folder for the embedded SQLite database")
	fs.StringVar(&d.database, "database", os.Getenv("FOUNDRY_DATABASE_URL"), "postgres://… URL; when set, data lives in PostgreSQL instead of --data")
}

func (d *dataFlags) config() server.Config {
	return server.Config{DataDir: d.data, Database: d.database}
}

func (d *dataFlags) open(ctx context.Context) (store.Store, error) {
	return server.OpenStore(ctx, d.config())
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// parse parses flags, allowing them before and after positional arguments
// (`foundry token revoke ID --data DIR`). Positional arguments end up in
// fs.Args().
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

func cmdMigrate(args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	var d dataFlags
	d.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	st, err := d.open(context.Background())
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Println("migrations applied")
	return nil
}
