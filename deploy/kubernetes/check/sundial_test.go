package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The sundial binary, built from this checkout once for the process.
var (
	binDir    string
	binary    string
	binErr    error
	buildOnce sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// sundial builds ./cmd/sundial of the module three levels up (the
// checkout these manifests are part of) and returns its path.
func sundial(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "sundial-k8s-check-"); binErr != nil {
			return
		}
		binary = filepath.Join(binDir, "sundial")
		cmd := exec.Command("go", "build", "-o", binary, "./cmd/sundial")
		cmd.Dir = filepath.Join("..", "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = &buildError{err, string(out)}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binary
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build ./cmd/sundial: " + e.err.Error() + "\n" + e.out }

// serveHelp is what `sundial serve -h` says of each flag, and the
// environment variables it names.
type serveHelp struct {
	// usage is each flag's usage text, its default at the end.
	usage map[string]string
	env   map[string]bool
}

var (
	flagLine    = regexp.MustCompile(`^  -([a-z0-9][a-z0-9-]*)`)
	envName     = regexp.MustCompile(`\$(SUNDIAL_[A-Z0-9_]+)`)
	defaultText = regexp.MustCompile(`\(default ([^()]*)\)\s*$`)
)

// help runs `sundial serve -h` and reads its flags.
func help(t *testing.T) serveHelp {
	t.Helper()
	// -h exits 2 after the usage, as the flag package does.
	out, _ := exec.Command(sundial(t), "serve", "-h").CombinedOutput()
	text := string(out)
	if !strings.HasPrefix(text, "Usage of sundial serve") {
		t.Fatalf("sundial serve -h said:\n%s", text)
	}
	h := serveHelp{usage: map[string]string{}, env: map[string]bool{}}
	name := ""
	for line := range strings.Lines(text) {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			name = m[1]
			h.usage[name] = ""
			continue
		}
		if name != "" {
			h.usage[name] += strings.TrimSpace(line) + " "
		}
	}
	for _, m := range envName.FindAllStringSubmatch(text, -1) {
		h.env[m[1]] = true
	}
	if len(h.usage) < 20 || h.usage["stop-grace"] == "" {
		t.Fatalf("read %d flags from sundial serve -h, without --stop-grace:\n%s", len(h.usage), text)
	}
	return h
}

// defaultOf is a flag's default as -h prints it.
func (h serveHelp) defaultOf(t *testing.T, flag string) string {
	t.Helper()
	m := defaultText.FindStringSubmatch(strings.TrimSpace(h.usage[flag]))
	if m == nil {
		t.Fatalf("sundial serve -h gives no default for --%s: %q", flag, h.usage[flag])
	}
	return m[1]
}

// serveArgs are the container's arguments after "serve", as flag name to
// value ("" for a boolean given alone). Each must be written --name=value,
// so that none is read as another's value.
func serveArgs(t *testing.T, args []string) map[string]string {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("the container's args are %q: want serve and its flags", args)
	}
	flags := map[string]string{}
	for _, a := range args[1:] {
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name == "" {
			t.Fatalf("argument %q is not a flag: write each as --name=value", a)
		}
		if _, dup := flags[name]; dup {
			t.Fatalf("--%s is given twice: the last would win", name)
		}
		flags[name] = value
	}
	return flags
}
