package swarming

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Spec is the swarming target's part of a job definition: one Swarming task
// request with one slice.
type Spec struct {
	// Server is the Swarming server's URL, https://<host>.
	Server string `json:"server"`
	// Realm is the LUCI realm the Swarming task runs in, "<project>:<realm>".
	Realm string `json:"realm"`
	// Pool is the bots' pool dimension, which Swarming requires.
	Pool string `json:"pool"`
	// Dimensions are the other dimensions a bot must have.
	Dimensions map[string]string `json:"dimensions,omitempty"`
	// Command is the argv the bot runs.
	Command []string `json:"command"`
	// RelativeCwd is the directory, relative to the Swarming task's root,
	// it runs in.
	RelativeCwd string `json:"relative_cwd,omitempty"`
	// CASInputRoot is the Swarming task's input files, uploaded to RBE-CAS.
	CASInputRoot *CASRef `json:"cas_input_root,omitempty"`
	// CIPDPackages are installed in the Swarming task's root before it runs.
	CIPDPackages []CIPDPackage `json:"cipd_packages,omitempty"`
	// Env is added to the Swarming task's environment.
	Env map[string]string `json:"env,omitempty"`
	// Tags are "key:value" strings; Sundial adds its own sundial_* tags.
	Tags []string `json:"tags,omitempty"`
	// Priority is 1 (most urgent) to 255; 0 takes defaultPriority.
	Priority int `json:"priority,omitempty"`
	// ExecutionTimeout bounds the Swarming task's run (TIMED_OUT past it);
	// 0 takes an hour.
	ExecutionTimeout Duration `json:"execution_timeout,omitempty"`
	// GracePeriod is how long the Swarming task has between SIGTERM and
	// SIGKILL; 0 takes 30s.
	GracePeriod Duration `json:"grace_period,omitempty"`
	// Expiration bounds how long the Swarming task may wait PENDING for a
	// bot (EXPIRED past it); 0 takes an hour.
	Expiration Duration `json:"expiration,omitempty"`
	// ServiceAccount is what the Swarming task calls other services as:
	// "none", "bot", or an account's email; "" is none.
	ServiceAccount string `json:"service_account,omitempty"`
}

// CASRef names a directory in RBE-CAS.
type CASRef struct {
	// Instance is "projects/<project>/instances/<instance>".
	Instance string `json:"cas_instance"`
	// Digest is "<sha256 hex>/<size in bytes>".
	Digest string `json:"digest"`
}

// CIPDPackage is one CIPD package to install.
type CIPDPackage struct {
	Name    string `json:"package_name"`
	Version string `json:"version"`
	Path    string `json:"path,omitempty"`
}

// Duration is a time.Duration written as Go writes one ("90s", "1h30m").
type Duration time.Duration

// UnmarshalJSON reads "1h30m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"90s\" or \"1h\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q: want a duration such as \"90s\" or \"1h\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes "1h30m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Swarming's limits and the defaults a spec that leaves them out gets.
const (
	defaultPriority         = 100
	defaultExecutionTimeout = time.Hour
	defaultGracePeriod      = 30 * time.Second
	defaultExpiration       = time.Hour
	// maxTimeout is what Swarming accepts for execution and expiration
	// (its own limit is 7 days).
	maxTimeout = 7 * 24 * time.Hour
	maxTags    = 256 - 5 // the sundial_* ones
)

var (
	realmRE    = regexp.MustCompile(`^[a-z0-9\-_]{1,100}:[a-z0-9_\.\-/]{1,400}$`)
	digestRE   = regexp.MustCompile(`^[0-9a-f]{64}/[0-9]+$`)
	instanceRE = regexp.MustCompile(`^projects/[a-z0-9\-]+/instances/[a-zA-Z0-9_\-]+$`)
	accountRE  = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[a-z]+$`)
)

// parseSpec decodes a spec strictly and checks every field, naming the one
// at fault, so Check and Launch refuse the same specs.
func parseSpec(raw json.RawMessage) (Spec, error) {
	var spec Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, fmt.Errorf("swarming: bad spec: %v", err)
	}
	if dec.More() {
		return spec, fmt.Errorf("swarming: bad spec: more than one JSON value")
	}
	if err := checkServer(spec.Server); err != nil {
		return spec, err
	}
	if !realmRE.MatchString(spec.Realm) {
		return spec, fmt.Errorf("swarming: realm %q: want <project>:<realm>", spec.Realm)
	}
	if spec.Pool == "" {
		return spec, fmt.Errorf("swarming: pool is missing: Swarming requires a pool dimension")
	}
	for k, v := range spec.Dimensions {
		switch {
		case k == "pool":
			return spec, fmt.Errorf("swarming: dimensions: pool: give it as the pool field")
		case k == "" || v == "" || strings.ContainsAny(k, ": ") || len(k) > 64 || len(v) > 256:
			return spec, fmt.Errorf("swarming: dimensions: %q: %q: want a key of up to 64 characters without ':' or spaces and a value of up to 256", k, v)
		}
	}
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return spec, fmt.Errorf("swarming: command is missing: want an argv, e.g. [python3, run.py]")
	}
	if c := spec.RelativeCwd; c != "" && (path.IsAbs(c) || strings.Contains(c, "\\") || path.Clean(c) != c || c == ".." || strings.HasPrefix(c, "../")) {
		return spec, fmt.Errorf("swarming: relative_cwd %q: want a clean relative path inside the Swarming task's root", c)
	}
	if r := spec.CASInputRoot; r != nil {
		if !instanceRE.MatchString(r.Instance) {
			return spec, fmt.Errorf("swarming: cas_input_root.cas_instance %q: want projects/<project>/instances/<instance>", r.Instance)
		}
		if !digestRE.MatchString(r.Digest) {
			return spec, fmt.Errorf("swarming: cas_input_root.digest %q: want <sha256 hex>/<size>", r.Digest)
		}
	}
	for i, p := range spec.CIPDPackages {
		if p.Name == "" || p.Version == "" {
			return spec, fmt.Errorf("swarming: cipd_packages[%d]: package_name and version are required", i)
		}
		if p.Path != "" && (path.IsAbs(p.Path) || path.Clean(p.Path) != p.Path || strings.HasPrefix(p.Path, "..")) {
			return spec, fmt.Errorf("swarming: cipd_packages[%d].path %q: want a clean relative path", i, p.Path)
		}
	}
	for k := range spec.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return spec, fmt.Errorf("swarming: env: %q: not a variable name", k)
		}
	}
	if len(spec.Tags) > maxTags {
		return spec, fmt.Errorf("swarming: tags: %d of them: want at most %d (Sundial adds 5)", len(spec.Tags), maxTags)
	}
	for _, tag := range spec.Tags {
		k, v, ok := strings.Cut(tag, ":")
		switch {
		case !ok || k == "" || v == "":
			return spec, fmt.Errorf("swarming: tags: %q: want key:value", tag)
		case strings.HasPrefix(k, "sundial_"):
			return spec, fmt.Errorf("swarming: tags: %q: the sundial_* tags are set by Sundial", tag)
		}
	}
	if spec.Priority < 0 || spec.Priority > 255 {
		return spec, fmt.Errorf("swarming: priority %d: want 1 (most urgent) to 255", spec.Priority)
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"execution_timeout", spec.ExecutionTimeout}, {"grace_period", spec.GracePeriod}, {"expiration", spec.Expiration}} {
		if v := time.Duration(d.v); v < 0 || v > maxTimeout || v%time.Second != 0 {
			return spec, fmt.Errorf("swarming: %s %s: want whole seconds, at most %s", d.name, v, maxTimeout)
		}
	}
	if a := spec.ServiceAccount; a != "" && a != "none" && a != "bot" && !accountRE.MatchString(a) {
		return spec, fmt.Errorf("swarming: service_account %q: want none, bot or an account's email", a)
	}
	return spec, nil
}

// checkServer accepts https URLs of a host, and http ones of a loopback
// address (a stand-in, a proxy on the same machine).
func checkServer(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("swarming: server %q: want https://<host>", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsLoopback() || u.Hostname() == "localhost" {
			return nil
		}
	}
	return fmt.Errorf("swarming: server %q: want https://<host> (http only to a loopback address)", s)
}

// properties is the Swarming task's properties as pRPC JSON.
func (s Spec) properties() taskProperties {
	p := taskProperties{
		Command:              s.Command,
		RelativeCwd:          s.RelativeCwd,
		Dimensions:           pairs(map[string]string{"pool": s.Pool}, s.Dimensions),
		Env:                  pairs(s.Env),
		ExecutionTimeoutSecs: int(orDefault(s.ExecutionTimeout, defaultExecutionTimeout) / time.Second),
		GracePeriodSecs:      int(orDefault(s.GracePeriod, defaultGracePeriod) / time.Second),
	}
	if r := s.CASInputRoot; r != nil {
		hash, size, _ := strings.Cut(r.Digest, "/")
		p.CASInputRoot = &casReference{Instance: r.Instance, Digest: digest{Hash: hash, SizeBytes: size}}
	}
	if len(s.CIPDPackages) > 0 {
		p.CIPDInput = &cipdInput{}
		for _, c := range s.CIPDPackages {
			p.CIPDInput.Packages = append(p.CIPDInput.Packages, cipdPackage(c))
		}
	}
	return p
}

func orDefault(d Duration, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return time.Duration(d)
}

// pairs lists maps as Swarming's StringPairs, sorted by key as it requires.
func pairs(ms ...map[string]string) []stringPair {
	var out []stringPair
	for _, m := range ms {
		for k, v := range m {
			out = append(out, stringPair{Key: k, Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
