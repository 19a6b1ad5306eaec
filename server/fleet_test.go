package server

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/store/postgres"
)

// TestInstancesTellWhoseSettingsDiffer: two instances on one database,
// one given another --url-deny. Each lists both, the other's egress
// settings as differing; each logs the difference once, when it first
// sees it, and counts it in /metrics; an instance three announcements
// silent is listed stopped and no longer counted.
func TestInstancesTellWhoseSettingsDiffer(t *testing.T) {
	t.Parallel()
	st, err := postgres.Open(t.Context(), pgtest.Shared(t).Database(t), postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := fakeclock.New(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	start := func(deny ...string) (*fleet, *bytes.Buffer) {
		t.Helper()
		s := Defaults(func(string) string { return "" })
		s.Egress.URLDeny = deny
		var log bytes.Buffer
		f, err := newFleet(st, &s, clk.Now, slog.New(slog.NewTextHandler(&log, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return f, &log
	}
	announce := func(f *fleet) {
		t.Helper()
		if err := f.announce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	a, aLog := start()
	b, bLog := start("192.0.2.1")
	if a.self.ID == b.self.ID || !strings.HasPrefix(a.self.ID, a.self.Host+"-") {
		t.Errorf("instance ids %q and %q: want each unique, naming its host", a.self.ID, b.self.ID)
	}
	announce(a)
	announce(b)
	announce(a)
	announce(b)
	for name, f := range map[string]*fleet{"a": a, "b": b} {
		list, err := f.list(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 {
			t.Fatalf("%s lists %d instances, want 2", name, len(list))
		}
		for _, in := range list {
			want := []string{"egress"}
			if in.Self {
				want = []string{}
			}
			if !in.Alive || !slices.Equal(in.SettingsDiffer, want) || in.Self != (in.ID == f.self.ID) {
				t.Errorf("%s lists %+v: want it alive, its settings differing in %v", name, in, want)
			}
		}
		if f.alive.Load() != 2 || f.differ.Load() != 1 {
			t.Errorf("%s counts %d alive, %d differing; want 2 and 1", name, f.alive.Load(), f.differ.Load())
		}
	}
	for name, log := range map[string]*bytes.Buffer{"a": aLog, "b": bLog} {
		if n := strings.Count(log.String(), "given other settings"); n != 1 {
			t.Errorf("%s logged the difference %d times, want once:\n%s", name, n, log)
		}
	}
	if !strings.Contains(aLog.String(), b.self.ID+" "+b.self.Version+": egress") {
		t.Errorf("a's warning does not name b and the settings:\n%s", aLog)
	}

	clk.Advance(postgres.StoppedAfter + time.Second)
	announce(a)
	if a.alive.Load() != 1 || a.differ.Load() != 0 {
		t.Errorf("with b silent, a counts %d alive, %d differing; want 1 and 0", a.alive.Load(), a.differ.Load())
	}
	if !strings.Contains(aLog.String(), "every instance alive has this one's settings again") {
		t.Errorf("a did not log that the difference ended:\n%s", aLog)
	}
}

// TestEachSharedSettingCountsInItsGroup: a change to one setting every
// instance must share changes its group's digest and no other's; a
// secret file counts by its contents, not its path.
func TestEachSharedSettingCountsInItsGroup(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	keyA, keyB, keyA2 := write("a.key", "key-one"), write("b.key", "key-two"), write("a2.key", "key-one")
	base := func() Settings {
		s := Defaults(func(string) string { return "" })
		s.SignIn.CookieKeyFile = keyA
		return s
	}
	digests := func(s Settings) map[string]string {
		t.Helper()
		d, err := s.fleetSettings()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := digests(base())
	for _, c := range []struct {
		name, group string
		change      func(*Settings)
	}{
		{"another administrator", "access", func(s *Settings) { s.access.Administrators = []access.Member{"user:eve@example.com"} }},
		{"another cookie key", "sign_in", func(s *Settings) { s.SignIn.CookieKeyFile = keyB }},
		{"another public URL", "sign_in", func(s *Settings) { s.Cloud.PublicURL = "https://other.example" }},
		{"another --url-deny", "egress", func(s *Settings) { s.Egress.URLDeny = []string{"192.0.2.1"} }},
		{"another --command-user", "commands", func(s *Settings) { s.Commands.User = "nobody" }},
		{"another push secret", "push", func(s *Settings) { s.pushSecret = []byte("other") }},
		{"another retention", "defaults", func(s *Settings) { s.Retention.Count = 7 }},
		{"the same cookie key at another path", "", func(s *Settings) { s.SignIn.CookieKeyFile = keyA2 }},
	} {
		s := base()
		c.change(&s)
		var wantGroups []string
		if c.group != "" {
			wantGroups = []string{c.group}
		}
		if got := differing(want, digests(s)); !slices.Equal(got, wantGroups) {
			t.Errorf("%s: the groups %v differ, want %v", c.name, got, wantGroups)
		}
	}
}
