package server

import (
	"net"
	"net/http"
	"sync"
)

// connLimit bounds the HTTP connections open at once, so that callers
// cannot take the file descriptors the server's jobs need, without
// letting connections that do nothing lock everyone else out: when the
// bound is reached, the connection that has waited longest for a request
// (an idle keep-alive one, or a new one that sent nothing yet) is closed
// to make room. Only when every connection has a request under way does
// the next one wait to be accepted.
//
// netutil.LimitListener counts every open connection alike: 1,024 clients
// that each sent one request and then kept the connection open held every
// slot, and the API and console answered no one else.
type connLimit struct {
	net.Listener
	max int

	mu     sync.Mutex
	freed  *sync.Cond // signalled when a connection closes or goes idle
	conns  map[net.Conn]*connEntry
	seq    uint64 // orders the entries by when they last became waiting
	closed bool
}

// connEntry is what connLimit knows of one open connection.
type connEntry struct {
	waiting bool   // idle or new: no request under way
	since   uint64 // when it last became waiting, in seq's order
}

// limitConns wraps ln; its ConnState must be the http.Server's.
func limitConns(ln net.Listener, max int) *connLimit {
	l := &connLimit{Listener: ln, max: max, conns: map[net.Conn]*connEntry{}}
	l.freed = sync.NewCond(&l.mu)
	return l
}

// Accept accepts a connection, then makes room for it: by closing the
// longest-waiting connection if every slot is taken, or, when every
// connection has a request under way, by waiting for one to end or go
// idle before the new one is served. Room is made only for a connection
// that came, so no waiting connection is closed for nothing; one more
// than the bound may be open while the newest waits.
func (l *connLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.conns) >= l.max {
		if l.closed {
			c.Close()
			return nil, net.ErrClosed
		}
		if victim := l.longestWaiting(); victim != nil {
			// Closing it makes its ConnState StateClosed, which removes
			// it; removing it here as well frees the slot at once.
			delete(l.conns, victim)
			victim.Close()
			continue
		}
		l.freed.Wait()
	}
	l.seq++
	l.conns[c] = &connEntry{waiting: true, since: l.seq}
	return c, nil
}

// Close closes the listener, and stops an Accept waiting for room.
func (l *connLimit) Close() error {
	l.mu.Lock()
	l.closed = true
	l.freed.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// longestWaiting is the connection that has waited longest with no
// request under way; nil if every connection has one.
func (l *connLimit) longestWaiting() net.Conn {
	var victim net.Conn
	var oldest uint64
	for c, e := range l.conns {
		if e.waiting && (victim == nil || e.since < oldest) {
			victim, oldest = c, e.since
		}
	}
	return victim
}

// ConnState follows each connection through the server: a request under
// way (StateActive) keeps it; between requests (StateIdle) it may be
// closed for another; closed or hijacked, its slot is free.
func (l *connLimit) ConnState(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateActive:
		if e, ok := l.conns[c]; ok {
			e.waiting = false
		}
	case http.StateIdle:
		if e, ok := l.conns[c]; ok {
			l.seq++
			e.waiting, e.since = true, l.seq
			l.freed.Signal()
		}
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
		l.freed.Signal()
	}
}
