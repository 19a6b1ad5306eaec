package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/sundial-cron/sundial/store/sqlite"
)

// runBackup runs "sundial backup [--db PATH] FILE": a consistent copy of
// the embedded shape's database, taken while the server runs
// (docs/operations.md says how to restore it).
func runBackup(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := flag.NewFlagSet("sundial backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "sundial.db", "the database file the server runs on (serve's --db)")
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial backup: %v\n", err)
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "sundial backup: want one argument, the backup file to write")
		return exitUsage
	}
	dest := fs.Arg(0)
	if err := sqlite.Backup(context.Background(), *db, dest, now()); err != nil {
		fmt.Fprintf(stderr, "sundial backup: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "backed up %s to %s\n", *db, dest)
	return 0
}
