package check

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sundial-cron/sundial/internal/pgtest"
)

// The Deployment's container, run as a process: its args, its
// environment from the ConfigMap and a Secret with the example's keys, the
// files its mounts hold, over a PostgreSQL of its own. The probes answer
// as the kubelet will ask them: ready while the database answers, not
// ready while it is down, alive throughout; and SIGTERM stops it within
// the pod's grace.
func TestTheContainerServesAndAnswersItsProbes(t *testing.T) {
	m := load(t)
	c := container(t, m)
	pg := pgtest.Own(t)
	dbURL := pg.Database(t)

	// The Secret as README.md makes it: the example's keys, real values.
	key := make([]byte, 32)
	rand.Read(key)
	secret := map[string]string{"database-url": dbURL, "cookie-keys": base64.StdEncoding.EncodeToString(key) + "\n"}
	if got := slices.Sorted(maps.Keys(secretData(m.secret))); !slices.Equal(got, slices.Sorted(maps.Keys(secret))) {
		t.Fatalf("the example Secret's keys are %v; this test makes %v", got, slices.Sorted(maps.Keys(secret)))
	}
	m.secret.Data, m.secret.StringData = nil, secret

	// The container's file system, but for the image's own files, under
	// root: each mounted file, at its path below root.
	root := t.TempDir()
	files := mounted(t, m, c)
	for p, content := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	args := slices.Clone(c.Args)
	for i, a := range args {
		if name, value, ok := strings.Cut(a, "="); ok {
			if _, isFile := files[value]; isFile {
				args[i] = name + "=" + filepath.Join(root, value)
			}
		}
	}
	// A port of its own: the later --listen wins.
	args = append(args, "--listen=127.0.0.1:0")

	srv := start(t, sundial(t), args, podEnv(t, m, c, secret))
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get("http://" + srv.addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	probe := func(p *corev1.Probe) (int, string) { t.Helper(); return get(p.HTTPGet.Path) }

	if status, body := probe(c.LivenessProbe); status != 200 || body != "ok\n" {
		t.Errorf("liveness: %d %q, want 200 ok", status, body)
	}
	if status, body := probe(c.ReadinessProbe); status != 200 || body != "ok\n" {
		t.Errorf("readiness with the database up: %d %q, want 200 ok", status, body)
	}
	// Sign-in is on: a caller from the pod's loopback without a token
	// (kubectl port-forward) is nobody.
	_, body := get("/api/v1/whoami")
	var who struct{ Identity string }
	if err := json.Unmarshal([]byte(body), &who); err != nil || who.Identity != "anonymous" {
		t.Errorf("a loopback caller without a token is %q (%v), want anonymous", body, err)
	}

	pg.Stop(t, "fast")
	var status int
	eventually(t, "readiness to fail while PostgreSQL is down", func() bool {
		status, body = probe(c.ReadinessProbe)
		return status == http.StatusServiceUnavailable
	})
	u, _ := url.Parse(dbURL)
	if !strings.HasPrefix(body, "not ready: ") || strings.Contains(body, u.Host) || strings.Contains(body, u.User.Username()) {
		t.Errorf("readiness with the database down says %q: want a reason that names nothing of the database", body)
	}
	if status, body := probe(c.LivenessProbe); status != 200 {
		t.Errorf("liveness with the database down: %d %q, want 200: the kubelet would restart every instance", status, body)
	}
	pg.Restart(t)
	eventually(t, "readiness to return with PostgreSQL", func() bool {
		status, _ := probe(c.ReadinessProbe)
		return status == 200
	})

	grace := time.Duration(*m.deployment.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.done:
		if srv.err != nil {
			t.Errorf("sundial serve exited with %v on SIGTERM", srv.err)
		}
	case <-time.After(grace):
		t.Errorf("sundial serve did not stop within the pod's grace, %v, of SIGTERM", grace)
	}
}

// podEnv is the container's environment as the kubelet makes it: envFrom's
// variables, then env's, which win.
func podEnv(t *testing.T, m *manifests, c *corev1.Container, secret map[string]string) []string {
	t.Helper()
	vars := map[string]string{}
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef == nil || e.SecretRef != nil {
			t.Fatalf("envFrom %+v: these tests know ConfigMaps alone", e)
		}
		maps.Copy(vars, m.configMaps[e.ConfigMapRef.Name].Data)
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			vars[e.Name] = secret[e.ValueFrom.SecretKeyRef.Key]
		case e.ValueFrom.ConfigMapKeyRef != nil:
			r := e.ValueFrom.ConfigMapKeyRef
			vars[e.Name] = m.configMaps[r.Name].Data[r.Key]
		default:
			t.Fatalf("env %s: these tests know values, Secrets and ConfigMaps", e.Name)
		}
	}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// server is a running `sundial serve`.
type server struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done
}

var listenLine = regexp.MustCompile(`"msg":"listening".*"addr":"([^"]+)"`)

// start runs binary with args in env alone, and waits until it listens
// (its log is JSON: --log-format=json).
func start(t *testing.T, binary string, args, env []string) *server {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
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
			mu.Lock()
			defer mu.Unlock()
			t.Logf("sundial %s\n%s", strings.Join(args, " "), log.String())
		}
	})
	select {
	case s.addr = <-listening:
	case <-s.done:
		t.Fatalf("sundial serve exited before listening: %v", s.err)
	case <-time.After(time.Minute):
		t.Fatal("sundial serve did not listen within a minute")
	}
	return s
}

// eventually waits for cond, failing t after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}
