package signin

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A peer is the other end of an accepted connection: on a loopback
// connection, a process of this machine, whose user the kernel knows.
type peer struct {
	local, remote netip.AddrPort
	once          sync.Once
	uid           int // -1: unknown
}

type peerKey struct{}

// ConnContext is the http.Server's ConnContext: it remembers each
// connection's two ends, so that LocalCaller can ask the kernel which
// user owns the caller's end. The lookup is made only when asked, once
// per connection.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	local, lerr := netip.ParseAddrPort(c.LocalAddr().String())
	remote, rerr := netip.ParseAddrPort(c.RemoteAddr().String())
	if lerr != nil || rerr != nil {
		return ctx
	}
	return context.WithValue(ctx, peerKey{}, &peer{local: local, remote: remote, uid: -1})
}

// peerUID returns the user id owning the caller's end of r's connection,
// and false where it cannot be told: not a loopback connection, a server
// without ConnContext, or a system without Linux's /proc/net.
func peerUID(r *http.Request) (int, bool) {
	p, _ := r.Context().Value(peerKey{}).(*peer)
	if p == nil || !p.remote.Addr().Unmap().IsLoopback() {
		return 0, false
	}
	p.once.Do(func() { p.uid = socketOwner("/proc/net", p.remote, p.local) })
	return p.uid, p.uid >= 0
}

// socketOwner is the uid of the TCP socket whose own address is local and
// whose peer is remote, from the kernel's socket tables under dir (the
// tcp and tcp6 files of /proc/net); -1 if none has both.
func socketOwner(dir string, local, remote netip.AddrPort) int {
	for _, name := range []string{"tcp", "tcp6"} {
		if uid := ownerIn(dir+"/"+name, local, remote); uid >= 0 {
			return uid
		}
	}
	return -1
}

// ownerIn looks local and remote up in one socket table: a header line,
// then one socket a line, "sl local_address rem_address st ... uid ...".
func ownerIn(path string, local, remote netip.AddrPort) int {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		l, lerr := procAddr(fields[1])
		r, rerr := procAddr(fields[2])
		if lerr != nil || rerr != nil || !sameEnd(l, local) || !sameEnd(r, remote) {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			return -1
		}
		return uid
	}
	return -1
}

// sameEnd compares two socket addresses, an IPv4 one mapped into IPv6
// (a dual-stack socket's) the same as itself.
func sameEnd(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// procAddr parses an address of /proc/net/tcp{,6}: the address's bytes in
// hex, each 32-bit word in the machine's byte order (little-endian on
// every platform Sundial ships for), a colon, the port in hex.
func procAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("no port in %q", s)
	}
	b, err := hex.DecodeString(host)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port in %q", s)
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr, uint16(p)), nil
}
