package local

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
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
//
// The file also says an owner that lives is at work. The heartbeats and
// leases in the rows are wall times, and a step of the wall clock (an NTP
// step, a VM resumed from a snapshot) moves them all at once: a step
// forward past OrphanAfter or Lease makes a live owner's claims look free
// to the first other dispatcher to claim after it, which would run the
// tasks under way again; the engine, finding their launches older than
// its LaunchGrace, would fail them as of unknown outcome while they ran,
// or launch them twice. So each owner counts its heartbeats into its file,
// and the others count their own heartbeats while that count stands
// still: an owner whose lock is held and whose count moved within
// OrphanAfter's worth of their heartbeats is known alive (Claim.Alive),
// and its claims hold whatever the wall clock says. No wall time enters
// that judgement: Run heartbeats by its clock's readings, which Go
// compares on the monotonic clock when the clock is time.Now. An owner
// whose count stood still that long (stopped with SIGSTOP, frozen) is
// judged by its rows again, as an owner without a file always is.

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

// beat counts one more heartbeat of this owner into its locked file.
func (d *Dispatcher) beat(lock *os.File) error {
	d.beats++
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], d.beats)
	_, err := lock.WriteAt(b[:], 0)
	return err
}

// watched is what the last heartbeats saw of another owner's file.
type watched struct {
	beats uint64 // its count
	still int    // for how many heartbeats in a row it has not moved
}

// reapDead frees the claims of every owner whose file in LockDir is not
// locked: its process is gone. It also finds which other owners are
// known alive, for the claims to spare (alive). Owners without a file
// (processes that run without a LockDir) are left to their rows, and so
// is this one: what it holds and no longer runs (an acknowledgement that
// failed) must come again when its lease ends, and what it runs it does
// not start twice. It is called at each heartbeat, after the owner's own.
func (d *Dispatcher) reapDead(ctx context.Context) error {
	entries, err := os.ReadDir(d.opts.LockDir)
	if err != nil {
		return err
	}
	var alive []string
	seen := map[string]bool{}
	for _, e := range entries {
		if o := e.Name(); o != d.opts.Owner && e.Type().IsRegular() {
			beats, locked, err := d.reap(ctx, o)
			if err != nil {
				return err
			}
			if locked {
				seen[o] = true
				if d.working(o, beats) {
					alive = append(alive, o)
				}
			}
		}
	}
	for o := range d.watch {
		if !seen[o] {
			delete(d.watch, o)
		}
	}
	d.alive = alive
	return nil
}

// working records the count found in a live owner's file, and reports
// whether it moved within OrphanAfter's worth of heartbeats.
func (d *Dispatcher) working(owner string, beats uint64) bool {
	w, ok := d.watch[owner]
	if ok && w.beats == beats {
		w.still++
	} else {
		w = watched{beats: beats}
	}
	d.watch[owner] = w
	rounds := int((d.opts.OrphanAfter + d.opts.Heartbeat - 1) / d.opts.Heartbeat)
	return w.still < rounds
}

// reap frees the claims of owner if its file is not locked, and otherwise
// returns the count in its file, with locked true.
func (d *Dispatcher) reap(ctx context.Context, owner string) (beats uint64, locked bool, err error) {
	path := filepath.Join(d.opts.LockDir, owner)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil // another reaper was first
	} else if err != nil {
		return 0, false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		// Alive. A file its owner has not counted into yet reads 0.
		var b [8]byte
		if n, err := f.ReadAt(b[:], 0); n < len(b) && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(b[:]), true, nil
	} else if err != nil {
		return 0, false, err
	}
	// Holding the dead owner's lock: its row goes before its file, so a
	// failure here leaves the file for the next pass to try again.
	if err := d.store.ForgetOwner(ctx, owner); err != nil {
		return 0, false, err
	}
	d.log.Info("task/local: freed the claims of a dead owner", "dead", owner)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, false, err
	}
	return 0, false, nil
}
