package config_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/store"
)

// The kinds of entry a fuzzed config directory holds.
const (
	entryFile     = iota // a regular file of fuzzed bytes
	entryBig             // a regular file of a size around MaxFileSize, by repetition
	entrySecret          // a symbolic link to a secret outside the directory
	entryDevZero         // a symbolic link to /dev/zero
	entrySibling         // a symbolic link to an entry before it
	entryDangling        // a symbolic link to nothing
	entryLoop            // a symbolic link to itself
	entryFIFO            // a named pipe no one writes to
	entrySubdir          // a directory with a config file in it
	entryDirLink         // a symbolic link to that directory
	entryKinds
)

// names are the shapes an entry's name takes, for the entry's index i:
// config files by either extension, files that are not configs (another
// extension, hidden, an editor's backup), names that are not project ids,
// and a second file for the project of the entry before.
var names = []func(i int) string{
	func(i int) string { return fmt.Sprintf("p%d.yaml", i) },
	func(i int) string { return fmt.Sprintf("p%d.yml", i) },
	func(i int) string { return fmt.Sprintf("p%d.txt", i) },
	func(i int) string { return fmt.Sprintf(".p%d.yaml", i) },
	func(i int) string { return fmt.Sprintf("p%d.yaml~", i) },
	func(i int) string { return fmt.Sprintf("P%d.yaml", i) },
	func(i int) string { return fmt.Sprintf("p%d x\n\t\".yaml", i) },
	func(i int) string { return fmt.Sprintf("p%d.yaml.yml", i) },
	func(i int) string { return fmt.Sprintf("p%dé.yml", i) },
	func(i int) string { return fmt.Sprintf("-p%d.yaml", i) },
	func(i int) string { return fmt.Sprintf("p%d.yml", max(i-1, 0)) },
	func(int) string { return ".yaml" },
}

// bigSizes are the sizes of an entryBig: large enough to cost, and either
// side of the bound.
var bigSizes = []int{64 << 10, 1 << 20, config.MaxFileSize, config.MaxFileSize + 1}

// marker is what the secret outside the directory holds: random, so that
// nothing but reading the secret can put it in an error, a status or a log.
var marker = "secret-" + rand.Text()

// dirEntry is one entry of a fuzzed directory, as the test made it.
type dirEntry struct {
	name string
	kind int
	data []byte // what a regular file holds
}

// buildDir makes, in dir, the directory layout describes: each 3 bytes are
// an entry's kind, name and content; texts (split at NUL) are the
// contents. Entries whose name is taken are left out.
func buildDir(t *testing.T, dir, secret string, layout []byte, texts []string) []dirEntry {
	t.Helper()
	var entries []dirEntry
	big := false
	for i := 0; i+3 <= len(layout) && len(entries) < 8; i += 3 {
		kind, nameSel, sel := int(layout[i])%entryKinds, int(layout[i+1]), int(layout[i+2])
		e := dirEntry{name: names[nameSel%len(names)](len(entries)), kind: kind}
		path := filepath.Join(dir, e.name)
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		if kind == entryBig && big { // one a directory: more would only be slower
			e.kind, kind = entryFile, entryFile
		}
		var err error
		switch kind {
		case entryFile:
			e.data = []byte(texts[sel%len(texts)])
			err = os.WriteFile(path, e.data, 0o644)
		case entryBig:
			big = true
			e.data = bigContent(texts[sel%len(texts)], bigSizes[(sel/len(texts))%len(bigSizes)])
			err = os.WriteFile(path, e.data, 0o644)
		case entrySecret:
			err = os.Symlink(secret, path)
		case entryDevZero:
			err = os.Symlink("/dev/zero", path)
		case entrySibling:
			to := "p0.yaml"
			if len(entries) > 0 {
				to = entries[sel%len(entries)].name
			}
			err = os.Symlink(to, path)
		case entryDangling:
			err = os.Symlink("missing.yaml", path)
		case entryLoop:
			err = os.Symlink(e.name, path)
		case entryFIFO:
			err = syscall.Mkfifo(path, 0o644)
		case entrySubdir:
			if err = os.Mkdir(path, 0o755); err == nil {
				err = os.WriteFile(filepath.Join(path, "inner.yaml"), []byte(texts[sel%len(texts)]), 0o644)
			}
		case entryDirLink:
			sub := filepath.Join(t.TempDir(), "sub")
			if err = os.Mkdir(sub, 0o755); err == nil {
				err = os.Symlink(sub, path)
			}
		}
		if err != nil {
			t.Fatalf("making %q: %v", e.name, err)
		}
		entries = append(entries, e)
	}
	return entries
}

// bigContent is size bytes from seed: up to the first \x01 once, and the
// rest over and over, then newlines. A file of exactly MaxFileSize is seed and then NULs,
// which the parser refuses at once: 16 MB of YAML it reads through take
// seconds, more than the fuzzer gives an input, and the 1 MB files are
// there for what the parser makes of many bytes.
func bigContent(seed string, size int) []byte {
	data := make([]byte, 0, size)
	if size == config.MaxFileSize {
		return append(data, seed[:min(len(seed), size)]...)[:size]
	}
	head, unit, _ := strings.Cut(seed, "\x01")
	if unit == "" {
		unit = "#"
	}
	data = append(data, head[:min(len(head), size)]...)
	for len(data)+len(unit) <= size {
		data = append(data, unit...)
	}
	// Whole units and then blank lines: a unit cut short would make many
	// a file bad YAML just for that.
	for len(data) < size {
		data = append(data, '\n')
	}
	return data
}

// expected is what a pass over the directory must make of one project.
type expected struct {
	path string
	// project is nil when the project's entry is bad: unreadable, not a
	// regular file, one of two files of the project, or invalid.
	project *config.Project
}

// expect works out, from what the test made and not from ReadDir, what
// every project in the directory must come to.
func expect(dir string, entries []dirEntry) map[string][]expected {
	out := map[string][]expected{}
	for _, e := range entries {
		id, ok := config.ProjectOf(e.name)
		if !ok || e.name[0] == '.' || e.kind == entrySubdir {
			continue
		}
		path := filepath.Join(dir, e.name)
		x := expected{path: path}
		if (e.kind == entryFile || e.kind == entryBig) && len(e.data) <= config.MaxFileSize {
			x.project, _ = config.Parse(path, e.data, allTargets())
		}
		out[id] = append(out[id], x)
	}
	return out
}

// lockedBuffer is a log destination the applies share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// heapPeak samples the live heap until stop is called, and returns its
// highest value. Sampling may miss a short peak; it cannot see one higher
// than there was, so a bound it finds broken was broken.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	done, peak := make(chan struct{}), make(chan uint64)
	go func() {
		high := read()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				peak <- max(high, read())
				return
			case <-tick.C:
				high = max(high, read())
			}
		}
	}()
	return func() uint64 { close(done); return <-peak }
}

// FuzzConfigDirectory: whatever a config directory holds (files of any
// bytes and size, symbolic links to a secret, to /dev/zero, to each other
// or to nothing, FIFOs, directories, odd names), reading it and a refresh
// pass through the real engine and SQLite store end, panic-free, within
// bounded memory; no error, status or log line shows the secret; every
// project's error names its file; a project whose file is bad gets no
// revision and no jobs, and every project whose file is good is applied.
func FuzzConfigDirectory(f *testing.F) {
	valid := "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {}\n  - id: b\n    schedule: \"0 4 * * *\"\n    command: {argv: [date]}\n  - id: c\n    schedule: \"@daily\"\n    disabled: true\n    noop: {}\n"
	aliases := "x: &a [\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]\njobs:\n  - id: a\n    schedule: \"@hourly\"\n    command: {argv: [*a, *a, *a, *a, *a, *a, *a, *a]}\n"
	invalid := "jobs:\n  - id: a\n    schedule: \"61 * * * *\"\n    noop: {}\n  - {id: a}\n"
	// A value named by alias in many errors.
	quoted := "x: &s " + strings.Repeat("A", 4000) + "\njobs:\n\x01  - *s\n"
	texts := strings.Join([]string{valid, aliases, invalid, "jobs: [", quoted}, "\x00")
	for _, layout := range [][]byte{
		{entryFile, 0, 0, entryFile, 1, 2, entryFile, 0, 1},                                                     // good, bad and aliased files
		{entryFile, 0, 0, entrySecret, 0, 0, entryFile, 1, 1},                                                   // a link to the secret among good files
		{entryDevZero, 0, 0, entryFile, 0, 0},                                                                   // /dev/zero
		{entryFile, 0, 0, entrySibling, 0, 0, entryDangling, 1, 0},                                              // links to an entry and to nothing
		{entryLoop, 0, 0, entryFIFO, 1, 0, entryFile, 0, 0},                                                     // a loop and a FIFO
		{entrySubdir, 0, 0, entryDirLink, 1, 0, entryFile, 0, 0},                                                // a directory and a link to one
		{entryFile, 0, 0, entryFile, 10, 2, entryFile, 2, 0, entryFile, 3, 0, entryFile, 4, 0},                  // two files of a project; files that are not configs
		{entryFile, 5, 0, entryFile, 6, 0, entryFile, 7, 0, entryFile, 8, 0, entryFile, 9, 0, entryFile, 11, 0}, // names that are not project ids
		{entryBig, 0, 5 * 2, entryFile, 1, 0},                                                                   // MaxFileSize bytes
		{entryBig, 0, 5*3 + 3, entryFile, 1, 0},                                                                 // past the bound
		{entryBig, 0, 5*1 + 1, entryFile, 1, 0},                                                                 // aliases over and over, 1 MB
		{entryBig, 0, 5*1 + 3, entryFile, 1, 0},                                                                 // an unclosed list, 1 MB
		{entryBig, 0, 5*1 + 4, entryFile, 1, 0},                                                                 // a 4 KB value named by alias in each of 250,000 errors, 1 MB
	} {
		f.Add(layout, texts)
	}
	secret := filepath.Join(f.TempDir(), "admin-token")
	if err := os.WriteFile(secret, []byte(marker+"\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, layout []byte, text string) {
		e := newEnv(t)
		logs := &lockedBuffer{}
		e.fresh = config.NewRefresher(e.dir, e.eng, e.st, config.RefresherOptions{Targets: e.tgts, Now: e.clock, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		entries := buildDir(t, e.dir, secret, layout, strings.Split(text, "\x00"))
		want := expect(e.dir, entries)
		var written int
		for _, en := range entries {
			written += min(len(en.data), config.MaxFileSize+1)
		}

		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		stop := heapPeak()
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		var files []config.File
		var dirErr, refreshErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			files, dirErr = config.ReadDir(e.dir)
			refreshErr = e.fresh.Refresh(ctx)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute): // a FIFO read or a wedged apply would block here
			cancel()
			buf := make([]byte, 1<<20)
			t.Fatalf("ReadDir and Refresh of %d entries did not end:\n%s", len(entries), buf[:runtime.Stack(buf, true)])
		}
		peak := stop()

		if dirErr != nil || refreshErr != nil {
			t.Fatalf("ReadDir: %v; Refresh: %v; want a bad entry to fail only its project", dirErr, refreshErr)
		}
		// Every byte read is held a few times over (the file, YAML's nodes,
		// the jobs, the stored definitions); what a file's aliases expand to
		// is bounded apart from its size.
		if bound := uint64(written)*256 + 64<<20; peak > base.HeapAlloc && peak-base.HeapAlloc > bound {
			t.Errorf("the heap grew by %d MB for %d bytes of files; want at most %d MB", (peak-base.HeapAlloc)>>20, written, bound>>20)
		}
		for _, f := range files {
			if f.Err != nil && strings.Contains(f.Err.Error(), marker) {
				t.Errorf("ReadDir's error for %q shows the secret: %v", f.Path, f.Err)
			}
		}
		if strings.Contains(logs.String(), marker) {
			t.Errorf("the log shows the secret")
		}
		statuses, err := e.fresh.Status(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(statuses) != len(want) {
			t.Errorf("%d projects have a status, want %d: %+v", len(statuses), len(want), statuses)
		}
		for _, s := range statuses {
			checkProject(t, e, s, want[s.Project])
		}
	})
}

// checkProject checks what a refresh made of one project against what the
// test expects of its entries.
func checkProject(t *testing.T, e *env, s config.Status, want []expected) {
	t.Helper()
	if len(want) == 0 {
		t.Errorf("project %q has a status and no entry: %+v", s.Project, s)
		return
	}
	if strings.Contains(s.Error, marker) {
		t.Errorf("project %q: its status shows the secret: %s", s.Project, s.Error)
	}
	if len(want) > 1 || want[0].project == nil {
		if s.Error == "" || s.Revision != "" || s.Jobs != 0 {
			t.Errorf("project %q: status %+v; want an error and no revision", s.Project, s)
		}
		if !strings.Contains(s.Error, s.File) || !slices.ContainsFunc(want, func(w expected) bool { return w.path == s.File }) {
			t.Errorf("project %q: error %q about %q; want it to name one of its files", s.Project, s.Error, s.File)
		}
		if jobs, _, err := e.st.Jobs(e.ctx, s.Project, store.Page{Limit: 1}); err != nil || len(jobs) != 0 {
			t.Errorf("project %q is bad and has jobs %v (%v)", s.Project, jobs, err)
		}
		return
	}
	p := want[0].project
	sum := sha256.Sum256(mustRead(t, want[0].path))
	if s.Error != "" || s.Revision != hex.EncodeToString(sum[:]) || s.Jobs != len(p.Jobs) || s.File != want[0].path {
		t.Errorf("project %q: status %+v; want revision %x with %d jobs and no error", s.Project, s, sum, len(p.Jobs))
	}
	enabled := 0
	for _, j := range p.Jobs {
		if !j.Disabled {
			enabled++
		}
	}
	jobs, _, err := e.st.Jobs(e.ctx, s.Project, store.Page{Limit: store.MaxLimit})
	if err != nil || len(jobs) != min(enabled, store.MaxLimit) {
		t.Errorf("project %q: %d jobs stored (%v), want its %d enabled ones", s.Project, len(jobs), err, enabled)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
