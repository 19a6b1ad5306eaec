package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// serveLimited serves handler as Run does, with a bound of max
// connections, until the test ends.
func serveLimited(t *testing.T, max int, handler http.Handler) string {
	t.Helper()
	s := Defaults(func(string) string { return "" })
	s.Listen, s.MaxConnections = "127.0.0.1:0", max
	ln, srv, err := listen(&s, handler)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// client is one caller with a connection of its own, kept alive between
// its requests.
func client() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
}

func get(t *testing.T, c *http.Client, url string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
}

// Connections kept open between requests hold no slot another caller
// needs: with every slot taken by an idle keep-alive connection, a new
// caller is served, and the idle callers are served again on new
// connections. Before, each idle connection held its slot until it timed
// out, and a client that sent a request every two minutes held it for
// good.
func TestIdleConnectionsLockNoOneOut(t *testing.T) {
	const max = 8
	url := serveLimited(t, max, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	idle := make([]*http.Client, max)
	for i := range idle {
		idle[i] = client()
		get(t, idle[i], url)
	}
	get(t, client(), url)
	for _, c := range idle {
		get(t, c, url)
	}
}

// A connection whose request is under way keeps its slot: with every slot
// busy, the next caller waits for one to end, and every request is
// answered whole.
func TestBusyConnectionsKeepTheirSlots(t *testing.T) {
	const max = 4
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(max)
	url := serveLimited(t, max, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started.Done()
			<-release
		}
	}))
	var done sync.WaitGroup
	for range max {
		done.Go(func() { get(t, client(), url+"/slow") })
	}
	started.Wait()
	// The next caller waits: nothing can make room.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/fast", nil)
	if resp, err := client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a caller was served while every slot had a request under way")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Logf("the waiting caller gave up: %v", err)
	}
	close(release)
	done.Wait()
	get(t, client(), url+"/fast")
}
