package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/internal/pgtest"
)

// The end-to-end tests run the real binary as an operator would: built
// from this package, on a temp database and config directory, with jobs
// that call a receiver on loopback.

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := emulatortest.Run(m)
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
	os.Exit(code)
}

// binary builds sundial once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sundial-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "sundial")
		out, err := exec.Command("go", "build", "-o", built, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// hit is one request the receiver got.
type hit struct {
	job       string // Sundial-Job-Id
	scheduled string // Sundial-Scheduled-Time
	attempt   string
	key       string // Sundial-Invocation-Id
	path      string
	from      string // the caller's address
	at        time.Time
}

// receiver is the jobs' url_fetch destination. It records every request
// and answers after delay, so that a kill finds launches in flight.
type receiver struct {
	*httptest.Server
	delay time.Duration

	mu       sync.Mutex
	hits     []hit
	changed  chan struct{} // closed and replaced at each hit
	hold     chan hit      // if set, the next request is sent here and held
	released chan struct{} // closed to let a held request answer
}

func newReceiver(t *testing.T, delay time.Duration) *receiver {
	r := &receiver{delay: delay, changed: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := hit{
			job:       req.Header.Get("Sundial-Job-Id"),
			scheduled: req.Header.Get("Sundial-Scheduled-Time"),
			attempt:   req.Header.Get("Sundial-Attempt"),
			key:       req.Header.Get("Sundial-Invocation-Id"),
			path:      req.URL.Path,
			from:      req.RemoteAddr,
			at:        time.Now(),
		}
		r.mu.Lock()
		r.hits = append(r.hits, h)
		close(r.changed)
		r.changed = make(chan struct{})
		hold, released := r.hold, r.released
		r.hold = nil
		r.mu.Unlock()
		if hold != nil {
			hold <- h
			select {
			case <-released:
			case <-req.Context().Done():
			}
		}
		select {
		case <-time.After(r.delay):
		case <-req.Context().Done():
		}
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(r.Close)
	t.Cleanup(r.release)
	return r
}

// release lets a held request answer.
func (r *receiver) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released != nil {
		close(r.released)
		r.released = nil
	}
}

// holdNext holds the next request unanswered until release or the end of
// the test, and
// returns it once it has arrived: a launch surely in flight.
func (r *receiver) holdNext(t *testing.T, limit time.Duration) hit {
	t.Helper()
	held := make(chan hit, 1)
	r.mu.Lock()
	r.hold, r.released = held, make(chan struct{})
	r.mu.Unlock()
	select {
	case h := <-held:
		return h
	case <-time.After(limit):
		t.Fatalf("no request within %v", limit)
		return hit{}
	}
}

// snapshot returns the hits so far and a channel closed at the next one.
func (r *receiver) snapshot() ([]hit, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...), r.changed
}

// waitFor waits until cond holds of the hits, or fails the test after
// limit: a bound on a hang, not a measurement.
func (r *receiver) waitFor(t *testing.T, limit time.Duration, what string, cond func([]hit) bool) []hit {
	t.Helper()
	deadline := time.After(limit)
	for {
		hits, changed := r.snapshot()
		if cond(hits) {
			return hits
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("after %v: still waiting for %s (%d hits)", limit, what, len(hits))
		}
	}
}

// onceEach fails the test for each occurrence that reached the receiver
// more than once, and returns the hits by occurrence ("job time").
func onceEach(t *testing.T, hits []hit) map[string]hit {
	t.Helper()
	seen := map[string]hit{}
	for _, h := range hits {
		occ := h.job + " " + h.scheduled
		if prev, ok := seen[occ]; ok {
			t.Errorf("occurrence %s launched twice: at %v and %v", occ, prev.at, h.at)
		}
		seen[occ] = h
	}
	return seen
}

// eachShape runs fn as a parallel subtest on each shape a test of any
// store applies to, with the serve flags of a new, empty store of it: a
// SQLite file, or a database of the tests' PostgreSQL server.
func eachShape(t *testing.T, fn func(t *testing.T, storage []string)) {
	t.Parallel()
	runShapes(t, true, fn)
}

// eachShapeInTurn is eachShape for a test that cannot run in parallel
// (it sets the environment).
func eachShapeInTurn(t *testing.T, fn func(t *testing.T, storage []string)) {
	runShapes(t, false, fn)
}

func runShapes(t *testing.T, parallel bool, fn func(t *testing.T, storage []string)) {
	for _, shape := range []string{"embedded", "postgres"} {
		t.Run(shape, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			storage := []string{"--db", filepath.Join(t.TempDir(), "sundial.db")}
			if shape == "postgres" {
				storage = []string{"--backend", "postgres", "--database-url", pgtest.Shared(t).Database(t)}
			}
			fn(t, storage)
		})
	}
}

// server is one run of `sundial serve`.
type runningServer struct {
	cmd  *exec.Cmd
	addr string // where its HTTP server listens
	log  *syncBuffer
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done
}

// serve starts `sundial serve` with args and waits until it listens. The
// jobs' receivers are on loopback, which url_fetch calls only where the
// operator allows it: a test's server allows 127.0.0.1 unless the test
// gives its own --url-allow.
func serve(t *testing.T, args ...string) *runningServer {
	t.Helper()
	return serveUnder(t, nil, args...)
}

// serveUnder is serve, with the binary run by wrapper (prlimit, say).
func serveUnder(t *testing.T, wrapper []string, args ...string) *runningServer {
	t.Helper()
	argv := append(wrapper, binary(t), "serve", "--listen", "127.0.0.1:0", "--log-format", "json")
	if !slices.Contains(args, "--url-allow") {
		argv = append(argv, "--url-allow", "127.0.0.1/32")
	}
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &runningServer{cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.log.WriteLine(line)
			if m := listenLine.FindStringSubmatch(line); m != nil {
				select {
				case listening <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.done
		if t.Failed() {
			t.Logf("sundial serve %v log:\n%s", args, s.log)
		}
	})
	select {
	case s.addr = <-listening:
	case <-s.done:
		t.Fatalf("sundial serve exited before listening: %v\n%s", s.err, s.log)
	case <-time.After(time.Minute):
		t.Fatalf("sundial serve did not listen within a minute\n%s", s.log)
	}
	return s
}

var listenLine = regexp.MustCompile(`"msg":"listening".*"addr":"([^"]+)"`)

// kill ends the process with SIGKILL, as a power cut or the OOM killer
// would: nothing of it runs after.
func (s *runningServer) kill(t *testing.T) {
	t.Helper()
	s.cmd.Process.Kill()
	<-s.done
}

// stop sends SIGTERM and waits for a clean exit.
func (s *runningServer) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		t.Fatal("sundial serve did not stop within a minute of SIGINT")
	}
	if s.err != nil {
		t.Errorf("sundial serve exited with %v after SIGINT", s.err)
	}
}

// syncBuffer collects a process's log lines for a failing test's output.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) WriteLine(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.WriteString(s)
	b.b.WriteByte('\n')
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// writeConfig writes a project's config file.
func writeConfig(t *testing.T, dir, project, yaml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, project+".yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// everySecond is a project config of n jobs named j0... firing every second
// and calling url.
func everySecond(n int, url string) string {
	var b strings.Builder
	b.WriteString("jobs:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: j%d\n    schedule: \"* * * * * *\"\n    timeout: 5s\n    url_fetch:\n      url: %s/j%d\n", i, url, i)
	}
	return b.String()
}

// mkdirPrivate makes dir for the server's user alone, as --command-user
// wants of a config directory.
func mkdirPrivate(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func withTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitForJob waits until the server has the job: it applies its configs
// once it listens.
func waitForJob(t *testing.T, s *runningServer, project, job string) {
	t.Helper()
	waitUntil(t, time.Minute, "job "+project+"/"+job+" to be defined", func() bool {
		resp, err := http.Get("http://" + s.addr + "/api/v1/projects/" + project + "/jobs/" + job)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
