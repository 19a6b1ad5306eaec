package config

import (
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
)

var testTargets = map[string]targets.Target{"noop": noop.Target{}}
