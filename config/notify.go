package config

import (
	"net/url"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/notify"
)

// maxLongRun bounds notify.long_run: its task is scheduled at the launch,
// and a queue holds tasks only so far ahead.
const maxLongRun = 24 * time.Hour

// notifyEvents are the transitions a job's notify may name.
var notifyEvents = []string{engine.NotifyFailure, engine.NotifyRecovery}

// notify reads a job's notify: a webhook URL, its body's format, the
// transitions to tell of (both when left out) and, optionally, how long an
// attempt may run before people are told. Where the webhook may
// connect is the server's url_fetch egress, checked when it is called.
func (d *decoder) notify(fs map[string]field, path string, def *engine.Definition) {
	f, ok := fs["notify"]
	if !ok {
		return
	}
	path += ".notify"
	nf, ok := d.mapping(f.value, path, "webhook", "format", "on", "long_run")
	if !ok {
		return
	}
	n := engine.Notify{On: slices.Clone(notifyEvents)}
	good := true
	if w, ok := nf["webhook"]; !ok {
		d.errorf(resolve(f.value), path+".webhook", "missing: want the URL to POST notifications to")
		good = false
	} else if s, ok := d.str(w.value, path+".webhook"); !ok {
		good = false
	} else if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		d.errorf(w.value, path+".webhook", "%q: want an http(s)://HOST/... URL", s)
		good = false
	} else {
		n.URL = s
	}
	if fm, ok := nf["format"]; ok {
		if s, ok := d.str(fm.value, path+".format"); !ok {
			good = false
		} else if !slices.Contains(notify.Formats, s) {
			d.errorf(fm.value, path+".format", "%q: want one of generic, slack, google_chat", s)
			good = false
		} else if s != notify.FormatGeneric {
			n.Format = s
		}
	}
	if on, ok := nf["on"]; ok {
		events, ok := d.strList(on.value, path+".on")
		switch {
		case !ok:
			good = false
		case len(events) == 0 && nf["long_run"].value == nil:
			d.errorf(on.value, path+".on", "empty: want failure, recovery or both, or a long_run (or leave notify out)")
			good = false
		default:
			for i, e := range events {
				if !slices.Contains(notifyEvents, e) || slices.Index(events, e) != i {
					d.errorf(resolve(on.value), path+".on", "%q: want failure and recovery, each at most once", e)
					good = false
				}
			}
			// The order written does not make another definition.
			n.On = slices.DeleteFunc(slices.Clone(notifyEvents), func(e string) bool { return !slices.Contains(events, e) })
		}
	}
	if lr, ok := nf["long_run"]; ok {
		v, ok := d.duration(lr.value, path+".long_run")
		switch {
		case !ok:
			good = false
		case v < time.Minute || v > maxLongRun:
			d.errorf(lr.value, path+".long_run", "%s: want from 1m to %s", v, maxLongRun)
			good = false
		default:
			n.LongRun = v
		}
	}
	if good {
		if len(n.On) == 0 {
			n.On = nil // one definition for on: [] and long_run alone
		}
		def.Notify = &n
	}
}
