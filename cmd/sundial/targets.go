package main

import (
	"github.com/sundial-cron/sundial/target"
	"github.com/sundial-cron/sundial/target/noop"
)

// targets returns the targets this binary runs, by kind. It is the one
// place they are registered: `sundial validate` checks configs against the
// same kinds the server runs.
func targets() map[string]target.Target {
	return map[string]target.Target{
		"noop": noop.Target{},
	}
}
