package urlfetch

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// Listeners are the server's own listening sockets. The target never
// connects to one of them, whatever its Egress allows: a job that called
// the server's API from the server's machine could be taken for a local
// caller, and would in any case act with the server's hand. The server
// adds its sockets once it listens, which is after the target is built;
// the zero value holds none.
type Listeners struct {
	mu    sync.RWMutex
	socks []netip.AddrPort
}

// Add records a listening socket, as its listener's Addr says it.
func (l *Listeners) Add(addr net.Addr) error {
	var ap netip.AddrPort
	if tcp, ok := addr.(*net.TCPAddr); ok {
		ap = tcp.AddrPort()
	} else {
		var err error
		if ap, err = netip.ParseAddrPort(addr.String()); err != nil {
			return fmt.Errorf("url_fetch: the server's listening address %q: %v", addr, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.socks = append(l.socks, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	return nil
}

// reaches returns the listening socket a connection to a and port would
// reach: one on that very address and port, or one on the wildcard address
// (0.0.0.0, [::]) and that port, which every address of this host reaches —
// loopback, the unspecified address, and each interface's addresses, read
// at each call since they change.
func (l *Listeners) reaches(a netip.Addr, port uint16) (netip.AddrPort, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var wildcard []netip.AddrPort
	for _, s := range l.socks {
		switch {
		case s.Port() != port:
		case s.Addr() == a || a.IsUnspecified():
			// Linux connects the unspecified address to the local host.
			return s, true
		case s.Addr().IsUnspecified():
			wildcard = append(wildcard, s)
		}
	}
	if len(wildcard) == 0 {
		return netip.AddrPort{}, false
	}
	if local(a) {
		return wildcard[0], true
	}
	return netip.AddrPort{}, false
}

// local reports whether a is an address of this host.
func local(a netip.Addr) bool {
	if a.IsLoopback() || a.IsUnspecified() || thisNetwork.Contains(a) {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		// Unknown: the safe answer for a check that refuses.
		return true
	}
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap() == a {
				return true
			}
		}
	}
	return false
}
