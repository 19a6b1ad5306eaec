package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/slo"
)

// objective reads a job's lateness and success objectives: a mapping of
// lateness (a duration), on_time and success (percentages) and window
// (days or a duration), or the word none to opt out of the server's
// defaults. A job that gives slo: sets its own objectives whole: it has no
// objective of a kind it leaves out; on_time and window left out take
// slo.DefaultOnTime and slo.DefaultWindow.
func (d *decoder) objective(n *yaml.Node, path string, o *slo.Objective) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value == "none" {
		o.None = true
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping such as {lateness: 30s, success: 99%%}, or none to opt out of the server's defaults; got %s", describe(n))
		return
	}
	fs, ok := d.mapping(n, path, "lateness", "on_time", "success", "window")
	if !ok {
		return
	}
	_, late := fs["lateness"]
	_, success := fs["success"]
	if f, ok := fs["lateness"]; ok {
		if v, ok := d.duration(f.value, path+".lateness"); ok {
			if v <= 0 {
				d.errorf(f.value, path+".lateness", "want a positive duration such as 30s")
			} else {
				o.Lateness = v
			}
		}
	}
	for _, t := range []struct {
		name string
		out  *float64
	}{{"on_time", &o.OnTime}, {"success", &o.Success}} {
		f, ok := fs[t.name]
		if !ok {
			continue
		}
		if s, ok := d.str(f.value, path+"."+t.name); ok {
			v, err := slo.ParsePercent(s)
			if err != nil {
				d.errorf(f.value, path+"."+t.name, "%v", err)
				continue
			}
			*t.out = v
		}
	}
	if f, ok := fs["on_time"]; ok && !late {
		d.errorf(f.value, path+".on_time", "applies only with lateness, which says what on time is")
	}
	if f, ok := fs["window"]; ok {
		if s, ok := d.str(f.value, path+".window"); ok {
			v, err := slo.ParseWindow(s)
			switch {
			case err != nil:
				d.errorf(f.value, path+".window", "%v", err)
			case v < slo.MinWindow || v > slo.MaxWindow:
				d.errorf(f.value, path+".window", "%s: want from %s to %s", s, slo.FormatWindow(slo.MinWindow), slo.FormatWindow(slo.MaxWindow))
			default:
				o.Window = v
			}
		}
	}
	if !late && !success {
		d.errorf(n, path, "no objective: want lateness, success or both; none opts out of the server's defaults")
	}
}
