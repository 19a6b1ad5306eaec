package version

import (
	"encoding/json"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// checkout is what Go records for a build of a tagged commit in a git
// checkout with local changes.
const checkout = `go	go1.26.8
path	github.com/sundial-cron/sundial/cmd/sundial
mod	github.com/sundial-cron/sundial	v0.1.0+dirty
build	-buildmode=exe
build	vcs=git
build	vcs.revision=1cf3b5f0a2b4c6d8e0f1a2b3c4d5e6f708192a3b
build	vcs.time=2026-03-01T12:00:00Z
build	vcs.modified=true
`

func TestACheckoutsBuildSaysItsVersionCommitAndChanges(t *testing.T) {
	t.Parallel()
	bi, err := debug.ParseBuildInfo(checkout)
	if err != nil {
		t.Fatal(err)
	}
	got := fromBuildInfo(bi)
	want := Info{
		Version:    "v0.1.0+dirty",
		Revision:   "1cf3b5f0a2b4c6d8e0f1a2b3c4d5e6f708192a3b",
		CommitTime: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Modified:   true,
		GoVersion:  "go1.26.8",
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestABuildWithoutVCSInformationIsDevel(t *testing.T) {
	t.Parallel()
	bi, err := debug.ParseBuildInfo("go\tgo1.26.8\npath\tgithub.com/sundial-cron/sundial/cmd/sundial\nmod\tgithub.com/sundial-cron/sundial\t(devel)\t\n")
	if err != nil {
		t.Fatal(err)
	}
	for name, bi := range map[string]*debug.BuildInfo{"no vcs settings": bi, "no build information": nil} {
		got := fromBuildInfo(bi)
		if got.Version != "(devel)" || got.Revision != "" || !got.CommitTime.IsZero() || got.Modified {
			t.Errorf("%s: got %+v, want version (devel) and nothing of a commit", name, got)
		}
		if got.GoVersion == "" || got.Platform == "" {
			t.Errorf("%s: got %+v, want the Go version and the platform all the same", name, got)
		}
	}
}

func TestTheLinkersSettingsTakeThePlaceOfTheRecordedOnes(t *testing.T) {
	t.Parallel()
	bi, err := debug.ParseBuildInfo(checkout)
	if err != nil {
		t.Fatal(err)
	}
	recorded := fromBuildInfo(bi)
	got := linked(recorded, "v0.2.0", "0123456789abcdef0123456789abcdef01234567", "2026-04-02T08:30:00Z", "")
	if got.Version != "v0.2.0" || got.Revision != "0123456789abcdef0123456789abcdef01234567" ||
		!got.CommitTime.Equal(time.Date(2026, 4, 2, 8, 30, 0, 0, time.UTC)) {
		t.Errorf("got %+v, want the linker's version, revision and time", got)
	}
	if got.Modified {
		t.Error("a revision the linker names without modified=true: got modified, want not")
	}
	if got := linked(recorded, "", "0123456789abcdef0123456789abcdef01234567", "", "true"); !got.Modified {
		t.Error("modified=true: got not modified")
	}
	if same := linked(recorded, "", "", "", ""); same != recorded {
		t.Errorf("no linker settings: got %+v, want the recorded %+v", same, recorded)
	}
	if bad := linked(recorded, "", "", "yesterday", ""); !bad.CommitTime.IsZero() {
		t.Errorf("a commit time that does not parse: got %v, want it left out", bad.CommitTime)
	}
}

// TestTheLinkersSettingsReachTheBinary builds a program with -ldflags -X as
// a release build would, and runs it.
func TestTheLinkersSettingsReachTheBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := filepath.Join(t.TempDir(), "show")
	const pkg = "github.com/sundial-cron/sundial/internal/version"
	build := exec.Command("go", "build", "-o", bin, "-ldflags", strings.Join([]string{
		"-X", pkg + ".version=v0.1.0",
		"-X", pkg + ".revision=1cf3b5f0a2b4c6d8e0f1a2b3c4d5e6f708192a3b",
		"-X", pkg + ".commitTime=2026-03-01T12:00:00Z",
		"-X", pkg + ".modified=true",
	}, " "), "./testdata/show")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var got Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.Version != "v0.1.0" || got.Revision != "1cf3b5f0a2b4c6d8e0f1a2b3c4d5e6f708192a3b" ||
		!got.CommitTime.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) || !got.Modified || got.GoVersion != runtime.Version() {
		t.Errorf("got %s, want the linker's version, revision, time and modified, and this Go", out)
	}
}

// TestTheAPIsJSON pins the names GET /api/v1/version answers with: they
// are part of API v1 (docs/compatibility.md).
func TestTheAPIsJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		info Info
		want string
	}{
		{"a release", Info{Version: "v0.1.0", Revision: "1cf3b5f", CommitTime: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), GoVersion: "go1.26.8", Platform: "linux/amd64"},
			`{"version":"v0.1.0","revision":"1cf3b5f","commit_time":"2026-03-01T12:00:00Z","go_version":"go1.26.8","platform":"linux/amd64"}`},
		{"a modified checkout", Info{Version: "v0.1.0+dirty", Revision: "1cf3b5f", CommitTime: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Modified: true, GoVersion: "go1.26.8", Platform: "linux/amd64"},
			`{"version":"v0.1.0+dirty","revision":"1cf3b5f","commit_time":"2026-03-01T12:00:00Z","modified":true,"go_version":"go1.26.8","platform":"linux/amd64"}`},
		{"what is not known is left out", Info{Version: "(devel)", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			`{"version":"(devel)","go_version":"go1.26.8","platform":"linux/amd64"}`},
	} {
		b, err := json.Marshal(c.info)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s:\ngot  %s\nwant %s", c.name, b, c.want)
		}
	}
}

func TestTheBuildInfoMetricIsOneLabelledWithTheBuild(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 1 || families[0].GetName() != "sundial_build_info" || len(families[0].GetMetric()) != 1 {
		t.Fatalf("got %v, want the one series sundial_build_info", families)
	}
	m := families[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	i := Get()
	want := map[string]string{"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion}
	if !maps.Equal(labels, want) || m.GetGauge().GetValue() != 1 {
		t.Errorf("got %v %v, want %v 1", labels, m.GetGauge().GetValue(), want)
	}
}
