// Package sqlitetest loses the tasks of an embedded store, as faults do:
// for the tests of the packages that run on the store, and for the lab's
// simulator. The store has no way to lose a task, and needs none; these
// write to its database file on a connection of their own, behind its
// back, as a fault would, and so know its schema's tasks table.
package sqlitetest

import (
	"context"
	"database/sql"
	"net/url"

	_ "modernc.org/sqlite" // the driver the store opens its file with
)

// PurgeTasks deletes every task in the database file at path, as a purge
// of the queue would: the watchdog must repair every job that waited for
// one.
func PurgeTasks(ctx context.Context, path string) error {
	return exec(ctx, path, "DELETE FROM tasks")
}

// DeleteTask deletes the task named name from the database file at path,
// if it is queued, as a lost task would vanish.
func DeleteTask(ctx context.Context, path, name string) error {
	return exec(ctx, path, "DELETE FROM tasks WHERE name = ?", name)
}

// exec runs one statement on a connection of its own, which waits for the
// store's committer to let go of the file, and commits as sqlite.SyncNormal
// does: the files faults are injected into are thrown away.
func exec(ctx context.Context, path, query string, args ...any) error {
	db, err := sql.Open("sqlite", path+"?"+url.Values{"_pragma": {"busy_timeout(5000)", "synchronous(NORMAL)"}}.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, query, args...)
	return err
}
