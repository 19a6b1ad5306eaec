package urlfetch_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/urlfetch"
)

// everything is an allow list that lets every address past the defaults.
var everything = []string{"0.0.0.0/0", "::/0", "localhost"}

// api is a stand-in for the server's own API: it counts the requests that
// reach it.
func api(t *testing.T, listen string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	var reached atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &reached
}

// A job's URL never reaches the server's own listening socket, by any
// spelling of its address, by a name resolving to it or by a redirect,
// even when the operator allows every address; another service on the
// same loopback address stays reachable.
func TestLaunchNeverReachesTheServerItself(t *testing.T) {
	t.Parallel()
	self, reached := api(t, "127.0.0.1:0")
	var server urlfetch.Listeners
	if err := server.Add(self.Listener.Addr()); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(self.Listener.Addr().(*net.TCPAddr).Port)
	pause := "/api/v1/projects/other/jobs/x/pause"
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusTemporaryRedirect)
		}
	}))
	t.Cleanup(other.Close)
	tgt := newTarget(t, urlfetch.Options{Egress: allowing(everything...), Server: &server})

	for _, host := range []string{
		"127.0.0.1", "localhost", "LocalHost.", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]",
		"0.0.0.0", "0", "127.1", "127.0.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1", "017700000001",
	} {
		t.Run(host, func(t *testing.T) {
			before := reached.Load()
			res := tgt.Launch(t.Context(), request(spec("http://"+host+":"+port+pause, `"method": "POST"`)))
			if res.Status != targets.Failed || !refusedOrUnresolved(res.Message) {
				t.Errorf("Launch = %v %q; want Failed: refused as the server itself, or the name does not resolve here", res.Status, res.Message)
			}
			if n := reached.Load() - before; n != 0 {
				t.Errorf("the server's API saw %d requests; want none", n)
			}
		})
	}
	t.Run("the refusal names the server itself", func(t *testing.T) {
		res := tgt.Launch(t.Context(), request(spec(self.URL+pause, `"method": "POST"`)))
		if want := "127.0.0.1:" + port + " refused: the server itself"; !strings.Contains(res.Message, want) {
			t.Errorf("Launch = %v %q; want a message with %q", res.Status, res.Message, want)
		}
	})
	t.Run("a 307 redirect from an allowed URL", func(t *testing.T) {
		before := reached.Load()
		res := tgt.Launch(t.Context(), request(spec(other.URL+"/?to="+self.URL+pause, `"method": "POST"`)))
		if res.Status != targets.Failed || !strings.Contains(res.Message, "the server itself") {
			t.Errorf("Launch = %v %q; want Failed: the server itself", res.Status, res.Message)
		}
		if n := reached.Load() - before; n != 0 {
			t.Errorf("the server's API saw %d requests; want none", n)
		}
	})
	t.Run("another service on the same address is reachable", func(t *testing.T) {
		res := tgt.Launch(t.Context(), request(spec(other.URL, "")))
		if res.Status != targets.Succeeded {
			t.Errorf("Launch = %v %q; want Succeeded", res.Status, res.Message)
		}
	})
}

// refusedOrUnresolved reports whether a failed launch's message says the
// server itself was refused, or that the name did not resolve: spellings
// such as 127.1 or 0x7f000001 resolve to 127.0.0.1 where the C library
// resolves names (and are then refused as the server itself), and are no
// name at all to Go's own resolver.
func refusedOrUnresolved(msg string) bool {
	return strings.Contains(msg, "refused: the server itself") || strings.Contains(msg, "no such host")
}

// A server listening on the wildcard address is reached by every address
// of the host on its port: loopback and each interface's address.
func TestLaunchNeverReachesAWildcardListener(t *testing.T) {
	t.Parallel()
	self, reached := api(t, ":0")
	var server urlfetch.Listeners
	if err := server.Add(self.Listener.Addr()); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(self.Listener.Addr().(*net.TCPAddr).Port)
	hosts := []string{"127.0.0.1:" + port, "127.0.0.53:" + port, "localhost:" + port, "[::1]:" + port, "0.0.0.0:" + port, "[::]:" + port}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.(*net.IPNet).IP); ok && !ip.Unmap().IsLinkLocalUnicast() {
			hosts = append(hosts, netip.AddrPortFrom(ip.Unmap(), uint16(self.Listener.Addr().(*net.TCPAddr).Port)).String())
		}
	}
	tgt := newTarget(t, urlfetch.Options{Egress: allowing(everything...), Server: &server})
	for _, host := range hosts {
		t.Run(host, func(t *testing.T) {
			before := reached.Load()
			res := tgt.Launch(t.Context(), request(spec("http://"+host+"/", "")))
			if res.Status != targets.Failed || !refusedOrUnresolved(res.Message) {
				t.Errorf("Launch = %v %q; want Failed: refused as the server itself, or the name does not resolve here", res.Status, res.Message)
			}
			if n := reached.Load() - before; n != 0 {
				t.Errorf("the server's API saw %d requests; want none", n)
			}
		})
	}
}
