// Command floor measures what SQLite alone costs for the writes of every
// launch at a given number of every-minute jobs: the floor under
// `sundial-lab bench`'s CPU and lateness, with no engine, no dispatcher and no
// Go-side store around the writes.
//
// It creates the shipped schema (through sqlite.Open), defines the jobs,
// then, at the turn of each second, writes for each job due in it what a
// noop launch writes: the queue's claim of its tick task, the tick (the
// job's row, the invocation record, the next tick task) and the outcome
// (the job's row, the record, the claimed task deleted), in commits
// of --batch jobs on one connection with the committer's settings. That is
// fewer commits and statements than the store makes, so the figures are a
// floor, not an estimate. --drop and --queue=false measure the schema
// without some of its B-trees. docs/benchmarks.md ("The floor under
// 100,000 jobs") has the figures and the commands.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sundial-cron/sundial/lab/loadtest/measure"
	"github.com/sundial-cron/sundial/store/sqlite"
)

type config struct {
	Jobs       int           `json:"jobs"`
	Batch      int           `json:"batch"`
	Warmup     time.Duration `json:"-"`
	Seconds    int           `json:"seconds"`
	Queue      bool          `json:"queue"`
	Drop       []string      `json:"dropped_indexes"`
	TicksFirst bool          `json:"ticks_first"`
	DB         string        `json:"-"`
	// Now is the clock; main gives it the wall clock.
	Now func() time.Time `json:"-"`
}

type report struct {
	config
	DefineS float64 `json:"define_s"`
	// Launches counts the measured seconds' launches, after the warm-up.
	Launches int     `json:"launches"`
	CPUPer1k float64 `json:"cpu_s_per_1000_launches"`
	// LastTickMaxS is, over the measured seconds, the longest time from
	// the turn of a second to the commit of its last tick: the lateness
	// of a second's last launch, had the launch taken no time.
	LastTickMaxS float64 `json:"last_tick_max_s"`
	// BurstMaxS is the longest time to a second's last outcome.
	BurstMaxS float64 `json:"burst_max_s"`
}

func main() {
	c := config{Now: time.Now}
	flag.IntVar(&c.Jobs, "jobs", 100000, "jobs, each every minute at a second of its own")
	flag.IntVar(&c.Batch, "batch", 250, "jobs per commit (at 100,000 jobs a commit of the store holds the writes of about 190 launches)")
	flag.DurationVar(&c.Warmup, "warmup", 10*time.Second, "unmeasured run before the measured seconds")
	flag.IntVar(&c.Seconds, "seconds", 60, "measured seconds")
	flag.BoolVar(&c.Queue, "queue", true, "write the task queue's rows (task/local keeps them in the same file)")
	drop := flag.String("drop", "", "comma-separated indexes of the shipped schema to drop before defining")
	flag.BoolVar(&c.TicksFirst, "ticks-first", false, "commit all of a second's ticks before its outcomes (best case for lateness)")
	flag.StringVar(&c.DB, "db", "", "database file (default: one in a temporary directory, removed afterwards)")
	flag.Parse()
	if *drop != "" {
		c.Drop = strings.Split(*drop, ",")
	}
	if c.DB == "" {
		dir, err := os.MkdirTemp("", "floor")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		c.DB = filepath.Join(dir, "floor.db")
	}
	r, err := run(context.Background(), c)
	if err != nil {
		fail(err)
	}
	out, _ := json.MarshalIndent(r, "", "  ")
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(1)
}

// conn is one connection with its prepared statements, as the
// committer's writer keeps them.
type conn struct {
	c     *sql.Conn
	stmts map[string]*sql.Stmt
	err   error // the first error; later calls do nothing
}

func (w *conn) exec(query string, args ...any) {
	if w.err != nil {
		return
	}
	st, ok := w.stmts[query]
	if !ok {
		if st, w.err = w.c.PrepareContext(context.Background(), query); w.err != nil {
			return
		}
		w.stmts[query] = st
	}
	_, w.err = st.Exec(args...)
}

func run(ctx context.Context, c config) (*report, error) {
	// The shipped schema, from the store's own migrations.
	s, err := sqlite.Open(c.DB, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	// The committer's settings (store/sqlite.Open: synchronous FULL, the
	// 8 MiB cache, the WAL restarted at 16,384 pages) and its background
	// checkpoint, passive, every 500 ms.
	q := url.Values{"_pragma": {"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(FULL)", "temp_store(MEMORY)", "cache_size(-8192)", "wal_autocheckpoint(16384)"}}
	db, err := sql.Open("sqlite", c.DB+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(2)
	sc, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	w := &conn{c: sc, stmts: map[string]*sql.Stmt{}}
	for _, ix := range c.Drop {
		w.exec("DROP INDEX " + ix)
	}
	if w.err != nil {
		return nil, w.err
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			var busy, log, done int
			_ = db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
		}
	}()

	// The bench's jobs, bench%03d/job%07d in a hundred projects, each at a
	// second of its own drawn at random, as H draws it from a hash; rows
	// of about the sizes the bench's have.
	rng := rand.New(rand.NewSource(1))
	ids := make([]string, c.Jobs)
	bySecond := make([][]int, 60)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench%03d/job%07d", i%100, i)
		s := rng.Intn(60)
		bySecond[s] = append(bySecond[s], i)
	}
	definition := []byte(`{"v":1,"schedule":"H * * * * *","target":"noop","revision":"bench"}`)
	const hash = "6d77b3be26d8615cf6a8f08a9b79223d72067a85e938ff70e4259653dfe4a333"
	machine := func(state string, at time.Time, nonce int64) []byte {
		ts := at.UTC().Format(time.RFC3339Nano)
		return fmt.Appendf(nil, `{"v":1,"state":%q,"tick_nonce":%d,"tick_at":%q,"next_at":%q,"cursor":%q,"watchdog_timer_ts":%q}`, state, nonce, ts, ts, ts, ts)
	}
	task := make([]string, c.Jobs) // each job's next tick task
	claimed := make([]string, c.Jobs)
	newTask := func(i int, eta time.Time) {
		nonce := rng.Int63()
		task[i] = fmt.Sprintf("%s/tick/%d", ids[i], nonce)
		w.exec("INSERT INTO tasks (name, job_id, kind, nonce, eta, invocation, attempt) VALUES (?, ?, 'tick', ?, ?, '', 0)", task[i], ids[i], nonce, eta.UnixNano())
	}

	// Defining, in order of id as engine.ApplyProject gives them, in
	// commits of 1,000.
	start := c.Now()
	order := projectOrder(c.Jobs)
	for lo := 0; lo < c.Jobs; lo += 1000 {
		w.exec("BEGIN IMMEDIATE")
		for _, i := range order[lo:min(lo+1000, c.Jobs)] {
			w.exec("INSERT INTO jobs (id, project, state, watchdog_ts, definition, machine, version) VALUES (?, ?, 'SCHEDULED', ?, ?, ?, 1)",
				ids[i], ids[i][:len("bench000")], start.UnixNano(), definition, machine("SCHEDULED", start, 0))
			w.exec("INSERT INTO definitions (job_id, hash, definition) VALUES (?, ?, ?)", ids[i], hash, definition)
			if c.Queue {
				newTask(i, start)
			}
		}
		w.exec("COMMIT")
	}
	if w.err != nil {
		return nil, w.err
	}
	r := &report{config: c, DefineS: c.Now().Sub(start).Seconds()}

	warm := int(c.Warmup / time.Second)
	first := c.Now().Truncate(time.Second).Add(time.Second)
	var cpu0 time.Duration
	logLine := []byte(strings.Repeat("2026-11-25T17:18:44.000268829Z attempt 1 LAUNCHING\n", 3))
	for sec := 0; sec < warm+c.Seconds; sec++ {
		due := first.Add(time.Duration(sec) * time.Second)
		if err := measure.SleepUntil(ctx, c.Now, due); err != nil {
			return nil, err
		}
		if sec == warm {
			cpu0 = cpuTime()
		}
		jobs := bySecond[sec%60]
		invocation := due.UTC().Format("20060102T150405Z")
		var lastTick time.Duration
		tick := func(part []int) {
			if c.Queue {
				w.exec("BEGIN IMMEDIATE")
				for _, i := range part {
					w.exec("UPDATE tasks SET owner = 'floor', lease_until = ? WHERE name = ?", due.Add(time.Minute).UnixNano(), task[i])
				}
				w.exec("COMMIT")
			}
			w.exec("BEGIN IMMEDIATE")
			for _, i := range part {
				w.exec("UPDATE jobs SET state = 'RUNNING', watchdog_ts = ?, machine = ?, version = version + 1 WHERE id = ?",
					due.Add(30*time.Second).UnixNano(), machine("RUNNING", due, 0), ids[i])
				w.exec(`INSERT INTO invocations (job_id, id, occurrence, status, attempt, manual, created, started, message, reason, count, log, definition_hash)
					VALUES (?, ?, ?, 'LAUNCHING', 1, 0, ?, ?, '', '', 0, ?, ?)`, ids[i], invocation, due.UnixNano(), due.UnixNano(), due.UnixNano(), logLine[:100], hash)
				if c.Queue {
					claimed[i] = task[i]
					newTask(i, due.Add(time.Minute))
				}
			}
			w.exec("COMMIT")
			lastTick = c.Now().Sub(due)
		}
		outcome := func(part []int) {
			w.exec("BEGIN IMMEDIATE")
			for _, i := range part {
				w.exec("UPDATE jobs SET state = 'SCHEDULED', watchdog_ts = ?, machine = ?, version = version + 1 WHERE id = ?",
					due.Add(time.Minute).UnixNano(), machine("SCHEDULED", due.Add(time.Minute), rng.Int63()), ids[i])
				w.exec("UPDATE invocations SET status = 'SUCCEEDED', ended = ?, message = 'noop: done', log = ? WHERE job_id = ? AND id = ?",
					c.Now().UnixNano(), logLine, ids[i], invocation)
				if c.Queue {
					w.exec("DELETE FROM tasks WHERE name = ?", claimed[i])
				}
			}
			w.exec("COMMIT")
		}
		var parts [][]int
		for lo := 0; lo < len(jobs); lo += c.Batch {
			parts = append(parts, jobs[lo:min(lo+c.Batch, len(jobs))])
		}
		if c.TicksFirst {
			for _, p := range parts {
				tick(p)
			}
			for _, p := range parts {
				outcome(p)
			}
		} else {
			for _, p := range parts {
				tick(p)
				outcome(p)
			}
		}
		if w.err != nil {
			return nil, w.err
		}
		if sec >= warm {
			r.Launches += len(jobs)
			r.LastTickMaxS = max(r.LastTickMaxS, lastTick.Seconds())
			r.BurstMaxS = max(r.BurstMaxS, c.Now().Sub(due).Seconds())
		}
	}
	if r.Launches > 0 {
		r.CPUPer1k = (cpuTime() - cpu0).Seconds() / float64(r.Launches) * 1000
	}
	return r, nil
}

// projectOrder is the order in which the engine's apply defines the
// bench's jobs: project by project, each project's jobs by id.
func projectOrder(n int) []int {
	order := make([]int, 0, n)
	for p := range min(n, 100) {
		for i := p; i < n; i += 100 {
			order = append(order, i)
		}
	}
	return order
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
