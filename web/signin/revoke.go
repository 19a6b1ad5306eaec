package signin

import (
	"context"
	"sync"
	"time"
)

// Revocations is the list of session ids ended by sign-out, and of
// sign-in states already used, each kept until the moment the session or
// state would have expired anyway, so the list stays small: one entry per
// sign-out in the last SessionTTL. Every instance that serves requests
// must see every revocation, so in a deployment of several instances it
// lives in their shared database, not in any one instance's memory.
type Revocations interface {
	// Revoke adds id to the list until the given time. Revoking an id
	// already there is not an error.
	Revoke(ctx context.Context, id string, until time.Time) error
	// Revoked reports whether id is on the list.
	Revoked(ctx context.Context, id string) (bool, error)
}

// Memory is a Revocations held in one process's memory: right for the
// embedded shape, where one process serves every request; a restart
// forgets it, so a session ended before a restart may be used again until
// it expires. Entries are dropped once expired.
type Memory struct {
	now func() time.Time
	mu  sync.Mutex
	ids map[string]time.Time
}

// NewMemory returns an empty in-memory revocation list on the given clock.
func NewMemory(now func() time.Time) *Memory {
	return &Memory{now: now, ids: map[string]time.Time{}}
}

// Revoke implements Revocations.
func (m *Memory) Revoke(_ context.Context, id string, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, t := range m.ids {
		if !t.After(now) {
			delete(m.ids, k)
		}
	}
	if until.After(m.ids[id]) {
		m.ids[id] = until
	}
	return nil
}

// Revoked implements Revocations.
func (m *Memory) Revoked(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.ids[id]
	return ok, nil
}
