package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sundial-cron/sundial/internal/version"
	"github.com/sundial-cron/sundial/store/postgres"
	"github.com/sundial-cron/sundial/web"
)

// A fleet is the instances of the PostgreSQL shape on one database, as
// this one sees them. Each announces itself in the database at its start
// and every minute after (postgres.Announce): who it is, where it runs,
// which release, and a digest of each group of the settings every
// instance must be given alike. Those are what an operator cannot see
// from one machine: an instance given another --access-file, another
// --url-allow or another cookie key serves the same people differently
// depending on which one the load balancer picks. So each instance
// compares its own with those of the others alive, logs a difference
// once until it changes, and counts them in /metrics.
type fleet struct {
	st   *postgres.Store
	self postgres.Instance
	now  func() time.Time
	log  *slog.Logger

	// alive and differ are the last comparison's counts, for /metrics.
	alive, differ atomic.Int64
	// warned is the difference last logged; only Run's goroutine uses it.
	warned string
}

// newFleet returns this instance's view of its fleet. Its ID is also the
// dispatcher's owner name in the task rows, so a claim names the host and
// process that holds it.
func newFleet(st *postgres.Store, s *Settings, now func() time.Time, log *slog.Logger) (*fleet, error) {
	digests, err := s.fleetSettings()
	if err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("this instance's host name: %w", err)
	}
	pid := os.Getpid()
	self := postgres.Instance{
		ID:   fmt.Sprintf("%s-%d-%s", host, pid, strings.ToLower(rand.Text()[:6])),
		Host: host, PID: pid, Version: version.Get().Version, Started: now().UTC(), Settings: digests,
	}
	return &fleet{st: st, self: self, now: now, log: log}, nil
}

// Run announces the instance at once and every postgres.AnnounceEvery until ctx
// ends; an announcement that fails is tried again at the next.
func (f *fleet) Run(ctx context.Context) error {
	t := time.NewTicker(postgres.AnnounceEvery)
	defer t.Stop()
	for {
		if err := f.announce(ctx); err != nil && ctx.Err() == nil {
			f.log.Warn("announcing this instance in the database failed; tried again in a minute", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// announce records the instance as seen now and compares its settings
// with the others alive.
func (f *fleet) announce(ctx context.Context) error {
	in := f.self
	in.Seen = f.now().UTC()
	if err := f.st.Announce(ctx, in); err != nil {
		return err
	}
	list, err := f.list(ctx)
	if err != nil {
		return err
	}
	var alive, differ int64
	var diffs []string
	for _, in := range list {
		if !in.Alive {
			continue
		}
		alive++
		if len(in.SettingsDiffer) > 0 {
			differ++
			diffs = append(diffs, fmt.Sprintf("%s %s: %s", in.ID, in.Version, strings.Join(in.SettingsDiffer, ", ")))
		}
	}
	f.alive.Store(alive)
	f.differ.Store(differ)
	said := strings.Join(diffs, "; ")
	switch {
	case said == f.warned:
	case said == "":
		f.log.Info("every instance alive has this one's settings again")
	default:
		f.log.Warn("instances alive on this database were given other settings than this one, which every instance must share (docs/postgres.md)", "instances", said)
	}
	f.warned = said
	return nil
}

// list is the instances announced, as GET /api/v1/instances answers.
func (f *fleet) list(ctx context.Context) ([]web.Instance, error) {
	ins, err := f.st.Instances(ctx)
	if err != nil {
		return nil, err
	}
	now := f.now()
	out := make([]web.Instance, len(ins))
	for i, in := range ins {
		out[i] = web.Instance{ID: in.ID, Host: in.Host, PID: in.PID, Version: in.Version, Started: in.Started, Seen: in.Seen,
			Alive: now.Sub(in.Seen) <= postgres.StoppedAfter, Self: in.ID == f.self.ID, SettingsDiffer: differing(f.self.Settings, in.Settings)}
	}
	return out, nil
}

// differing names, sorted, the groups a and b both digest and digest
// differently: a group only one has tells of another release, not of
// other settings.
func differing(a, b map[string]string) []string {
	out := []string{}
	for k, v := range a {
		if w, ok := b[k]; ok && w != v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// fleetSettings digests each group of the settings every instance of a
// shape of many must be given alike (docs/postgres.md, "Start"): the
// files' contents, not their paths, which may differ from machine to
// machine. The config source is not among them: the database records it,
// and refuses an instance reading another (engine.ClaimConfigSource).
func (s *Settings) fleetSettings() (map[string]string, error) {
	contents := map[string]string{}
	for name, file := range map[string]string{
		"cookie_keys": s.SignIn.CookieKeyFile, "static_tokens": s.SignIn.StaticTokensFile,
		"admin_token": s.SignIn.AdminTokenFile, "oidc_client_secret": s.SignIn.OIDCClientSecretFile,
	} {
		if file == "" {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		contents[name] = digest(b)
	}
	in := s.SignIn
	groups := map[string]any{
		"access": s.access,
		"sign_in": []any{in.OIDCIssuer, in.OIDCClientID, in.IAPAudience, in.IDTokenAudience, in.SessionTTL, in.InsecureDevCookies,
			s.Cloud.PublicURL, contents},
		"egress":   s.Egress,
		"commands": s.Commands,
		"push":     []any{s.Push.OIDCAccount, s.Push.SwarmingTopic, digest(s.pushSecret)},
		"defaults": []any{s.Retention, s.Objective, s.MaxCallsPerProject, s.TaskGrace, s.StopGrace, s.PollMin, s.PollMax},
	}
	out := map[string]string{}
	for name, v := range groups {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("the %s settings: %w", name, err)
		}
		out[name] = digest(b)
	}
	return out, nil
}

// digest names b in 16 hex digits: enough to tell two apart, and no key
// or token it is made from can be read back from it.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// fleetCollector serves the last comparison's counts at each scrape.
type fleetCollector struct{ f *fleet }

var (
	instancesAliveDesc = prometheus.NewDesc("sundial_instances_alive",
		"Instances alive on this database (announced within 3 minutes), this one included, as this one last saw them.", nil, nil)
	instancesDifferDesc = prometheus.NewDesc("sundial_instances_settings_differ",
		"Instances alive on this database given other settings than this one, of those every instance must share.", nil, nil)
)

func (c fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- instancesAliveDesc
	ch <- instancesDifferDesc
}

func (c fleetCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(instancesAliveDesc, prometheus.GaugeValue, float64(c.f.alive.Load()))
	ch <- prometheus.MustNewConstMetric(instancesDifferDesc, prometheus.GaugeValue, float64(c.f.differ.Load()))
}
