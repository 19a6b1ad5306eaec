package config

import (
	"github.com/sundial-cron/sundial/target"
	"github.com/sundial-cron/sundial/target/noop"
)

var testTargets = map[string]target.Target{"noop": noop.Target{}}
