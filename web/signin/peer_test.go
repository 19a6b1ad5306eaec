package signin

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// The kernel's socket tables tell who owns the caller's end of a loopback
// connection: this process's own connection is its user's.
func TestSocketOwnerOfOwnConnection(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp: not Linux")
	}
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}[network]
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		client, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		local := netip.MustParseAddrPort(server.LocalAddr().String())
		remote := netip.MustParseAddrPort(server.RemoteAddr().String())
		if uid := socketOwner("/proc/net", remote, local); uid != os.Geteuid() {
			t.Errorf("%s: the owner of this process's connection is %d; want %d", network, uid, os.Geteuid())
		}
		client.Close()
		server.Close()
		ln.Close()
	}
}

// Addresses of both families are read in the kernel's byte order, and the
// caller's end is found by both its address and its peer's.
func TestSocketOwnerReadsTheTables(t *testing.T) {
	dir := t.TempDir()
	header := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	tcp := header +
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n" +
		"   1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 65534        0 2 1 0 20 4 30 10 -1\n" +
		"   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0 20 4 30 10 -1\n"
	tcp6 := header +
		"   0: 00000000000000000000000001000000:D432 00000000000000000000000001000000:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 4 1 0 20 4 30 10 -1\n" +
		"   1: 0000000000000000FFFF00000100007F:D433 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001        0 5 1 0 20 4 30 10 -1\n"
	for name, content := range map[string]string{"tcp": tcp, "tcp6": tcp6} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	server := netip.MustParseAddrPort("127.0.0.1:8080")
	for _, c := range []struct {
		name   string
		caller string
		server netip.AddrPort
		want   int
	}{
		{"a caller of another user", "127.0.0.1:54321", server, 65534},
		{"an IPv6 caller", "[::1]:54322", netip.MustParseAddrPort("[::1]:8080"), 1000},
		{"a dual-stack socket's caller", "127.0.0.1:54323", server, 1001},
		{"a caller the tables do not hold", "127.0.0.1:54399", server, -1},
		{"the right port of another peer", "127.0.0.1:54321", netip.MustParseAddrPort("127.0.0.1:9090"), -1},
	} {
		if got := socketOwner(dir, netip.MustParseAddrPort(c.caller), c.server); got != c.want {
			t.Errorf("%s: owner %d; want %d", c.name, got, c.want)
		}
	}
}
