package pass

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func fixed() time.Time { return t0 }

// counted is a Result: the pass's number, idle when it is even.
type counted int

func (c counted) Idle() bool { return c%2 == 0 }

func (c counted) LogValue() slog.Value { return slog.GroupValue(slog.Int("n", int(c))) }

// logTo returns a logger that writes to buf without times, so that a
// test compares its lines; the test reads buf once Run has returned.
func logTo(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

func lines(buf *bytes.Buffer) []string {
	if buf.Len() == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// TestRunPassesAtEachTickAndLogsWhatItDid: one pass per tick, until the
// ticks end; a pass that did something is logged with its counts, an
// idle one is not, and a failure is logged as one.
func TestRunPassesAtEachTickAndLogsWhatItDid(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	ticks := make(chan time.Time) // unbuffered: Run takes each tick before the next is sent
	passes := 0
	b := New("test", fixed, logTo(&buf), ticks, func(ctx context.Context) (Result, error) {
		passes++
		if passes == 3 {
			return counted(passes), errors.New("store unavailable")
		}
		return counted(passes), nil
	})
	done := make(chan error)
	go func() { done <- b.Run(t.Context()) }()
	for range 4 {
		ticks <- t0
	}
	// Run returns once the fourth pass has ended: a closed ticker asks
	// for no more.
	close(ticks)
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if passes != 4 {
		t.Errorf("%d passes in 4 ticks", passes)
	}
	want := []string{
		`level=INFO msg="test pass" n=1`,
		`level=ERROR msg="test pass failed" err="store unavailable"`,
		`level=INFO msg="test pass" n=3`,
	}
	if got := lines(&buf); !slices.Equal(got, want) {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRunStopsWhenCancelledWithoutATick: a pass runs only when a tick
// asks, and none is needed to stop.
func TestRunStopsWhenCancelledWithoutATick(t *testing.T) {
	t.Parallel()
	b := New("test", fixed, nil, make(chan time.Time), func(context.Context) (Result, error) {
		t.Error("a pass ran without a tick")
		return counted(0), nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.Run(ctx); err != nil { // returns, or the test times out
		t.Errorf("Run = %v, want nil", err)
	}
}

// TestRunDoesNotLogAPassCutShortByItsEnd: a pass that fails because Run's
// context ended is how a server stops, not a failure.
func TestRunDoesNotLogAPassCutShortByItsEnd(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	ticks := make(chan time.Time, 1)
	ticks <- t0
	ctx, cancel := context.WithCancel(t.Context())
	b := New("test", fixed, logTo(&buf), ticks, func(ctx context.Context) (Result, error) {
		cancel()
		return counted(0), ctx.Err()
	})
	if err := b.Run(ctx); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if got := lines(&buf); len(got) != 0 {
		t.Errorf("log %q, want nothing", got)
	}
}

// TestNewRequiresAClock: a pass never reads the wall clock, so one built
// without a clock fails at once, naming its Options.
func TestNewRequiresAClock(t *testing.T) {
	t.Parallel()
	defer func() {
		if p := recover(); p != "watchdog.New: Options.Now is required" {
			t.Errorf("panic %v, want the missing Options.Now named", p)
		}
	}()
	New("watchdog", nil, nil, nil, nil)
	t.Error("New without a clock returned")
}
