package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/sundial-cron/sundial/store/postgres"
)

// runMigrate runs "sundial migrate [--database-url URL] [--dry-run]": the
// PostgreSQL shape's schema brought to this release's version, as serve
// does at start, or with --dry-run what would run, printed and not run.
func runMigrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sundial migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("database-url", os.Getenv("SUNDIAL_DATABASE_URL"), "the PostgreSQL database (serve's --database-url; default $SUNDIAL_DATABASE_URL)")
	dryRun := fs.Bool("dry-run", false, "print the migrations that would run, and run none")
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial migrate: %v\n", err)
		}
		return exitUsage
	}
	if fs.NArg() > 0 || *url == "" {
		fmt.Fprintln(stderr, "sundial migrate: want --database-url or $SUNDIAL_DATABASE_URL, and no argument")
		return exitUsage
	}
	ms, err := postgres.MigrateDatabase(context.Background(), *url, *dryRun)
	if err != nil {
		fmt.Fprintf(stderr, "sundial migrate: %v\n", err)
		return 1
	}
	switch {
	case len(ms) == 0:
		fmt.Fprintf(stdout, "the schema is at version %d, this release's: nothing to run\n", postgres.SchemaVersion())
	case *dryRun:
		fmt.Fprintf(stdout, "%d migrations would run, to schema version %d, in one transaction:\n", len(ms), postgres.SchemaVersion())
		for _, m := range ms {
			fmt.Fprintf(stdout, "\n-- %s\n%s", m.Name, m.SQL)
		}
	default:
		for _, m := range ms {
			fmt.Fprintf(stdout, "applied %s\n", m.Name)
		}
		fmt.Fprintf(stdout, "the schema is at version %d\n", postgres.SchemaVersion())
	}
	return 0
}
