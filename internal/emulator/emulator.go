// Package emulator starts the Cloud Datastore emulator, for tests and for
// sundial simulate --backend=datastore. A test
// package calls Main from its TestMain and Datastore from each test that
// needs the emulator: the first such test starts one emulator for the whole
// package, on a free loopback port, and Main stops it when the tests end.
//
// The emulator runs in Firestore in Datastore mode (what production runs:
// strongly consistent reads, no entity-group write limits) and with
// --require_indexes against the repository's index.yaml, so a query that
// needs an index index.yaml lacks fails in tests as it would in production.
// gcloud's `beta emulators datastore start` cannot pass --require_indexes
// or --index_file, so the emulator's jar is run directly.
package emulator

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvHost names an emulator already running; Datastore then uses it instead
// of starting one. The Datastore client reads the same variable.
const EnvHost = "DATASTORE_EMULATOR_HOST"

// EnvRequire, set to 1, makes a missing emulator fail the tests that need it
// instead of skipping them (CI sets it).
const EnvRequire = "SUNDIAL_REQUIRE_EMULATOR"

var (
	once    sync.Once
	running *Process
	host    string
	failed  error
)

// Main runs the package's tests and stops the emulator if one was started.
// Call it from TestMain.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main for a TestMain that has more to clean up: it runs the tests,
// stops the emulator if one was started, and returns the exit code.
func Run(m *testing.M) int {
	code := m.Run()
	if running != nil {
		if err := running.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the Datastore emulator:", err)
		}
	}
	return code
}

// Datastore returns the host:port of a Datastore emulator, starting one
// the first time it is asked, and sets DATASTORE_EMULATOR_HOST so the
// Datastore client connects to it. Without an emulator it skips t, or
// fails it when SUNDIAL_REQUIRE_EMULATOR=1.
func Datastore(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if host = os.Getenv(EnvHost); host != "" {
			return
		}
		root, err := moduleRoot()
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			running, err = Start(ctx, filepath.Join(root, "index.yaml"))
		}
		if err != nil {
			failed = err
			return
		}
		host = running.Host
		failed = os.Setenv(EnvHost, host)
	})
	if failed != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("Datastore emulator (required by %s=1): %v", EnvRequire, failed)
		}
		t.Skipf("no Datastore emulator: %v", failed)
	}
	return host
}

// Process is a running emulator.
type Process struct {
	Host string // host:port it serves on
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	log  *tail
}

// Start starts an emulator in Firestore in Datastore mode on a free
// loopback port, in memory, requiring the indexes indexFile declares (or
// none, serving every query, for indexFile ""), and returns once it
// answers.
func Start(ctx context.Context, indexFile string) (*Process, error) {
	args := []string{"--testing", "--firestore_in_datastore_mode"}
	if indexFile != "" {
		if _, err := os.Stat(indexFile); err != nil {
			return nil, fmt.Errorf("index file: %w", err)
		}
		args = append(args, "--require_indexes", "--index_file="+indexFile)
	}
	jar, err := findJar(ctx)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &Process{Host: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{}), log: &tail{}}
	args = append(args, "--host=127.0.0.1", fmt.Sprintf("--port=%d", port))
	p.cmd = exec.Command("java", append([]string{"-cp", jar, "com.google.cloud.datastore.emulator.CloudDatastore", "start"}, args...)...)
	// Its own process group, so Stop reaches every process it starts; and
	// killed with this process if the test binary dies without Stop.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stderr = p.cmd.Stdout
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the Datastore emulator: %w", err)
	}
	ready := make(chan struct{})
	go p.watch(out, ready)
	select {
	case <-ready:
	case <-p.done:
		return nil, fmt.Errorf("the Datastore emulator exited before it was ready: %s", p.log)
	case <-ctx.Done():
		_ = p.Stop()
		return nil, fmt.Errorf("the Datastore emulator did not get ready: %w: %s", ctx.Err(), p.log)
	}
	if err := p.healthy(ctx); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return p, nil
}

// watch reads the emulator's output, keeping its tail for errors, and
// signals ready when the emulator says it serves.
func (p *Process) watch(out io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(out)
	signalled := false
	for sc.Scan() {
		p.log.add(sc.Text())
		if !signalled && strings.Contains(sc.Text(), "health check endpoint") {
			close(ready)
			signalled = true
		}
	}
	_ = p.cmd.Wait()
	close(p.done)
}

// healthy asks the emulator's health check endpoint.
func (p *Process) healthy(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.Host+"/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the Datastore emulator does not answer: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 100))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "Ok" {
		return fmt.Errorf("the Datastore emulator's health check answered %s %q", resp.Status, body)
	}
	return nil
}

// Stop kills the emulator's process group and waits for it to exit.
func (p *Process) Stop() error {
	err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		// The JVM ignored SIGTERM (or is stuck in a shutdown hook).
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	return nil
}

// findJar locates the emulator that gcloud installed.
func findJar(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", errors.New("java is not installed (the emulator is a Java program)")
	}
	if _, err := exec.LookPath("gcloud"); err != nil {
		return "", errors.New("gcloud is not installed")
	}
	out, err := exec.CommandContext(ctx, "gcloud", "info", "--format=value(installation.sdk_root)").Output()
	if err != nil {
		return "", fmt.Errorf("gcloud info: %w", err)
	}
	jar := filepath.Join(strings.TrimSpace(string(out)), "platform", "cloud-datastore-emulator", "CloudDatastore.jar")
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("the Datastore emulator is not installed (gcloud components install cloud-datastore-emulator, or apt-get install google-cloud-cli-datastore-emulator): %w", err)
	}
	return jar, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// moduleRoot is the directory of the go.mod above the working directory:
// tests run in their package's directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// tail keeps the last lines of the emulator's output for error messages.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > 20 {
		t.lines = t.lines[1:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
