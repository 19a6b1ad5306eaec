package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// Liveness by file lock. A heartbeat can only say an owner has been silent
// for a while, so a restarted process would wait OrphanAfter before taking
// over the claims of the process it replaces. SQLite in WAL mode works only
// between processes of one host, and on one host the kernel knows exactly
// which processes are alive: each owner holds an exclusive flock on a file
// named after it in Options.LockDir, the kernel releases the lock when the
// process dies however it dies, and an owner that can take another's lock
// knows that one is gone.

// lockOwner creates and locks dir/<owner>. The returned file holds the
// lock for as long as it stays open. It must be called before the owner's
// first heartbeat, so that an owner with a row and a file is alive exactly
// when its file is locked.
func lockOwner(dir, owner string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, owner)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			return nil, err
		}
		// A reaper may have taken the new file for a dead owner's and
		// removed it between the open and the lock; a lock on a removed
		// file proves nothing to anyone, so make a new one.
		held, err1 := f.Stat()
		named, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return f, nil
		}
		f.Close()
		if err := errors.Join(err1, err2); err != nil && !errors.Is(err2, os.ErrNotExist) {
			return nil, err
		}
	}
}

// reapDead frees the claims of every owner whose file in LockDir is not
// locked: its process is gone. Owners without a file (processes that run
// without a LockDir) are left to their heartbeats.
func (d *Dispatcher) reapDead(ctx context.Context) error {
	entries, err := os.ReadDir(d.opts.LockDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if o := e.Name(); o != d.opts.Owner && e.Type().IsRegular() {
			if err := d.reap(ctx, o); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *Dispatcher) reap(ctx context.Context, owner string) error {
	path := filepath.Join(d.opts.LockDir, owner)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // another reaper was first
	} else if err != nil {
		return err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil // alive
	} else if err != nil {
		return err
	}
	// Holding the dead owner's lock: its row goes before its file, so a
	// failure here leaves the file for the next pass to try again.
	if err := d.store.ForgetOwner(ctx, owner); err != nil {
		return err
	}
	d.log.Info("task/local: freed the claims of a dead owner", "dead", owner)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
