package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/engine"
)

// The bounds on the history a config may ask to keep. Each job keeps the
// newest count records of each kind (successes and skips, failures) and
// none older than age; without bounds, `count: 2000000000` kept every
// record of an every-second job for ever, and one project could fill the
// disk every project's history is on. The records a job keeps are what
// its count says (a record older than age goes sooner), so the counts
// are what is bounded per project: every job may keep the standard
// retainedPerJob of each kind, and what a project's jobs ask beyond that
// comes from one pool of maxRetainedExtra records for the whole project.
// What a job that says nothing keeps is the server's
// (`--retention-count`), the operator's choice.
const (
	maxRetentionCount = 100_000
	maxRetentionAge   = 400 * 24 * time.Hour // GitHub Actions' longest, for one
	maxRetainedExtra  = 1_000_000
)

// retainedPerJob is the records of each kind any job may keep without
// drawing on its project's pool: the standard default, whatever a
// server's flags make it.
var retainedPerJob = engine.DefaultRetention.Count

// retention reads how long the job's history is kept: age and count, and
// the same for failures. A field left out takes the server's default, so
// one spelled out must bound something.
func (d *decoder) retention(n *yaml.Node, path string, r *engine.Retention) {
	fs, ok := d.mapping(n, path, "age", "count", "failures")
	if !ok {
		return
	}
	d.retentionBounds(fs, path, &r.Age, &r.Count)
	if f, ok := fs["failures"]; ok {
		if ffs, ok := d.mapping(f.value, path+".failures", "age", "count"); ok {
			d.retentionBounds(ffs, path+".failures", &r.FailureAge, &r.FailureCount)
		}
	}
}

func (d *decoder) retentionBounds(fs map[string]field, path string, age *time.Duration, count *int) {
	if f, ok := fs["age"]; ok {
		v, ok := d.duration(f.value, path+".age")
		switch {
		case !ok:
		case v == 0:
			d.errorf(f.value, path+".age", "want a positive duration such as 720h; leave it out for the server's default")
		case v > maxRetentionAge:
			d.errorf(f.value, path+".age", "%s: want at most %s (%d days)", v, maxRetentionAge, maxRetentionAge/(24*time.Hour))
		default:
			*age = v
		}
	}
	if f, ok := fs["count"]; ok {
		v, ok := d.integer(f.value, path+".count")
		switch {
		case !ok:
		case v == 0:
			d.errorf(f.value, path+".count", "want at least 1; leave it out for the server's default")
		case v > maxRetentionCount:
			d.errorf(f.value, path+".count", "%d: want at most %d", v, maxRetentionCount)
		case d.retainedExtra+max(v-retainedPerJob, 0) > maxRetainedExtra:
			d.errorf(f.value, path+".count", "%d: with it the project's jobs keep %d records beyond the %d of each kind every job may keep; a project may keep at most %d beyond them",
				v, d.retainedExtra+v-retainedPerJob, retainedPerJob, maxRetainedExtra)
		default:
			d.retainedExtra += max(v-retainedPerJob, 0)
			*count = v
		}
	}
}
