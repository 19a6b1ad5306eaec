package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// The WAL is copied back into the database file (checkpointed) by a
// goroutine of its own on a connection of its own, woken after commits.
// Left to SQLite's automatic checkpoint, the copy and its fsyncs ran on
// the committer after every thousandth page, and under load that was a
// sixth of the committer's time, during which no Update could commit.
//
// A passive checkpoint never blocks the committer. It runs at most every
// checkpointPause: a page that several commits rewrote meanwhile (a busy
// job's row is rewritten three times per occurrence) is copied once.
//
// The WAL file starts over only when a write begins with every frame
// copied, which a busy committer rarely leaves time for; so the writer
// keeps an automatic checkpoint at walRestartPages (64 MiB of 4 KiB
// pages), which finds nearly everything already copied, completes the
// copy, and lets the next write start the WAL over.
const (
	checkpointPause = 500 * time.Millisecond
	walRestartPages = 16384
)

// checkpointLoop checkpoints after each wake-up until quit is closed.
func (s *Store) checkpointLoop(db *sql.DB) {
	defer close(s.ckptDone)
	for {
		select {
		case <-s.ckptWake:
		case <-s.quit:
			return
		}
		// Errors change nothing: the writer's automatic checkpoint is
		// the backstop.
		var busy, log, done int
		_ = db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
		select {
		case <-time.After(checkpointPause):
		case <-s.quit:
			return
		}
	}
}

// wakeCheckpointer asks for a checkpoint of what just committed; one
// already asked for covers it.
func (s *Store) wakeCheckpointer() {
	select {
	case s.ckptWake <- struct{}{}:
	default:
	}
}
