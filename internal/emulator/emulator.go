// Package emulator starts the Cloud Datastore emulator, for tests (through
// emulatortest) and for the lab's `sundial-lab simulate --backend=datastore`,
// and the Cloud Pub/Sub emulator, for the pubsub target's tests. The shipped
// binary never links it (cmd/sundial's TestTheBinaryLinksNoLab).
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
	"time"
)

// EnvHost names an emulator already running; Datastore then uses it instead
// of starting one. The Datastore client reads the same variable.
const EnvHost = "DATASTORE_EMULATOR_HOST"

// EnvPubSubHost names a Pub/Sub emulator already running; the Pub/Sub
// client connects to it instead of to Google.
const EnvPubSubHost = "PUBSUB_EMULATOR_HOST"

// Process is a running emulator.
type Process struct {
	Host string // host:port it serves on
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	log  *tail
	// ready is in the line of output that says the emulator serves.
	ready string
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
	p := &Process{Host: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{}), log: &tail{}, ready: "health check endpoint"}
	args = append(args, "--host=127.0.0.1", fmt.Sprintf("--port=%d", port))
	p.cmd = exec.Command("java", append([]string{"-cp", jar, "com.google.cloud.datastore.emulator.CloudDatastore", "start"}, args...)...)
	if err := p.start(ctx, "Datastore"); err != nil {
		return nil, err
	}
	if err := p.healthy(ctx); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return p, nil
}

// StartPubSub starts a Pub/Sub emulator on a free loopback port, in
// memory, and returns once it serves. It runs the emulator's own script, not
// `gcloud beta emulators pubsub start`, which would put a Python process
// between this one and the JVM: the script execs java, so the JVM is the
// process that dies with this one.
func StartPubSub(ctx context.Context) (*Process, error) {
	root, err := sdkRoot(ctx)
	if err != nil {
		return nil, err
	}
	script := filepath.Join(root, "platform", "pubsub-emulator", "bin", "cloud-pubsub-emulator")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("the Pub/Sub emulator is not installed (gcloud components install pubsub-emulator, or apt-get install google-cloud-cli-pubsub-emulator): %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &Process{Host: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{}), log: &tail{}, ready: "Server started"}
	p.cmd = exec.Command(script, "--host=127.0.0.1", fmt.Sprintf("--port=%d", port))
	if err := p.start(ctx, "Pub/Sub"); err != nil {
		return nil, err
	}
	return p, nil
}

// start runs p.cmd and waits for it to print p.ready; name is the
// emulator's, for errors.
func (p *Process) start(ctx context.Context, name string) error {
	// Its own process group, so Stop reaches every process it starts; and
	// killed with this process if the test binary dies without Stop.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	p.cmd.Stderr = p.cmd.Stdout
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("starting the %s emulator: %w", name, err)
	}
	ready := make(chan struct{})
	go p.watch(out, ready)
	select {
	case <-ready:
		return nil
	case <-p.done:
		return fmt.Errorf("the %s emulator exited before it was ready: %s", name, p.log)
	case <-ctx.Done():
		_ = p.Stop()
		return fmt.Errorf("the %s emulator did not get ready: %w: %s", name, ctx.Err(), p.log)
	}
}

// watch reads the emulator's output, keeping its tail for errors, and
// signals ready when the emulator says it serves.
func (p *Process) watch(out io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(out)
	signalled := false
	for sc.Scan() {
		p.log.add(sc.Text())
		if !signalled && strings.Contains(sc.Text(), p.ready) {
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
	root, err := sdkRoot(ctx)
	if err != nil {
		return "", err
	}
	jar := filepath.Join(root, "platform", "cloud-datastore-emulator", "CloudDatastore.jar")
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("the Datastore emulator is not installed (gcloud components install cloud-datastore-emulator, or apt-get install google-cloud-cli-datastore-emulator): %w", err)
	}
	return jar, nil
}

// sdkRoot is where gcloud is installed, its emulators among it; both
// emulators are Java programs.
func sdkRoot(ctx context.Context) (string, error) {
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
	return strings.TrimSpace(string(out)), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
