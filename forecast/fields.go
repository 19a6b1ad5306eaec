package forecast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
)

// Field is one field of a job's definition that a change sets to another
// value, named as the config writes it; "" is a field left out.
type Field struct {
	Name string `json:"name"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// fieldsOf renders a definition's fields as the config names them,
// leaving out those at their zero value.
func fieldsOf(d *engine.Definition) [][2]string {
	p := d.Policy
	var out [][2]string
	add := func(name string, v any) {
		s := fmt.Sprint(v)
		if s != "" && s != "0" && s != "0s" && s != "false" && s != "<nil>" {
			out = append(out, [2]string{name, s})
		}
	}
	add("schedule", d.Schedule)
	add("time_zone", d.TimeZone)
	add("dst.gap", d.Gap)
	add("dst.repeat", d.Repeat)
	add("active.from", d.Active.From)
	add("active.until", d.Active.Until)
	add("skip_calendars", calendars(d.SkipCalendars))
	add("only_calendars", calendars(d.OnlyCalendars))
	add("max_runs", p.MaxRuns)
	add("jitter", p.Jitter)
	add("overlap", p.Overlap)
	add("max_concurrent", p.MaxConcurrent)
	add("catchup_window", p.CatchupWindow)
	add("timeout", p.Timeout)
	add("retries.max_attempts", p.MaxAttempts)
	add("retries.min_backoff", p.MinBackoff)
	add("retries.max_backoff", p.MaxBackoff)
	add("auto_disable_after", p.AutoDisableAfter)
	add("idempotent", p.Idempotent)
	add("target", d.Target)
	add("spec", compact(d.Spec))
	if d.Notify != nil {
		add("notify", jsonOf(d.Notify))
	}
	if d.Retention != (engine.Retention{}) {
		add("retention", jsonOf(d.Retention))
	}
	return out
}

// changedFields lists the fields whose values differ between old and
// new, in the order fieldsOf gives them.
func changedFields(old, new *engine.Definition) []Field {
	was := map[string]string{}
	for _, f := range fieldsOf(old) {
		was[f[0]] = f[1]
	}
	var out []Field
	seen := map[string]bool{}
	for _, f := range fieldsOf(new) {
		seen[f[0]] = true
		if was[f[0]] != f[1] {
			out = append(out, Field{Name: f[0], Old: was[f[0]], New: f[1]})
		}
	}
	for _, f := range fieldsOf(old) {
		if !seen[f[0]] {
			out = append(out, Field{Name: f[0], Old: f[1]})
		}
	}
	return out
}

// calendars names calendars with their days, so that a calendar whose
// days change shows as changed.
func calendars(cs []*schedule.Calendar) string {
	var names []string
	for _, c := range cs {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
