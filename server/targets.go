package server

import (
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/sundial-cron/sundial/notify"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/command"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/targets/pubsub"
	"github.com/sundial-cron/sundial/targets/swarming"
	"github.com/sundial-cron/sundial/targets/urlfetch"
)

// targetOptions say which targets a server runs and how far they reach.
type targetOptions struct {
	// commands registers the command target: the embedded shape runs
	// commands on its own machine for commandProjects; the cloud shape
	// never does.
	commands        bool
	commandProjects []string
	// anyProject lets every project run commands, publish to any topic
	// and use any Swarming realm: for sundial validate, which checks
	// configs, not grants.
	anyProject bool
	// pubsubGrants are the topics each project's pubsub jobs may publish
	// to (--pubsub-topics).
	pubsubGrants []pubsub.TopicGrant
	// swarmingGrants are the realms each project's swarming jobs may run
	// Swarming tasks in (--swarming-realms).
	swarmingGrants []swarming.RealmGrant
	// swarmingServers are the Swarming servers jobs may name
	// (--swarming-servers).
	swarmingServers []string
	// swarmingTopic is the topic Swarming posts Swarming task ends to,
	// whose push subscription calls PushPath (--swarming-pubsub-topic);
	// pushSecret makes and checks the pushes' tokens (--push-secret-file).
	swarmingTopic string
	pushSecret    []byte
	// commandUser is the user commands run as; "": the server's.
	commandUser string
	// commandCgroup is where each command attempt gets a cgroup (see
	// command.Options.Cgroup).
	commandCgroup string
	// logger gets a target's warnings at start; nil: slog.Default().
	logger *slog.Logger
	// egress bounds where url_fetch jobs may connect.
	egress urlfetch.Egress
	// server holds the server's own listening sockets, which url_fetch
	// never connects to; nil where nothing listens (sundial validate).
	server *urlfetch.Listeners
}

// newTargets returns the targets this binary runs, by kind. It is the one
// place they are registered: `sundial validate` checks configs against the
// same kinds the server runs.
func newTargets(o targetOptions) (map[string]targets.Target, error) {
	fetch, err := urlfetch.New(urlfetch.Options{Egress: o.egress, Server: o.server})
	if err != nil {
		return nil, err
	}
	swarm, err := swarming.New(swarming.Options{
		Grants:      o.swarmingGrants,
		Servers:     o.swarmingServers,
		AnyRealm:    o.anyProject,
		PubSubTopic: o.swarmingTopic,
		PushToken:   func(ref targets.PushRef) string { return targets.PushToken(o.pushSecret, ref) },
	})
	if err != nil {
		return nil, err
	}
	ts := map[string]targets.Target{
		// Its client, with Google default credentials, is made at its
		// first call, as pubsub's is.
		"swarming":  swarm,
		"noop":      noop.Target{},
		"url_fetch": fetch,
		// Its client, with Google default credentials (or the emulator
		// PUBSUB_EMULATOR_HOST names), is made at its first launch, so
		// sundial validate and a server with no pubsub job need none.
		"pubsub": pubsub.New(pubsub.Options{Grants: o.pubsubGrants, AnyTopic: o.anyProject}),
	}
	if o.commands {
		cmd, err := command.New(command.Options{
			Cgroup:     o.commandCgroup,
			Logger:     o.logger,
			Projects:   o.commandProjects,
			AnyProject: o.anyProject,
			User:       o.commandUser,
		})
		if err != nil {
			return nil, err
		}
		ts["command"] = cmd
	}
	return ts, nil
}

// ConfigTargets are the targets a config is checked against without a
// server: every kind this binary runs, for any project, since which
// projects a server grants what is the server's business, not the
// config's (sundial validate, a config repo's CI).
func ConfigTargets() (map[string]targets.Target, error) {
	return newTargets(targetOptions{commands: true, anyProject: true, commandCgroup: "none", logger: slog.New(slog.DiscardHandler)})
}

// closeTargets closes the targets that hold connections (pubsub's client),
// once the server has stopped calling them.
func closeTargets(ts map[string]targets.Target) error {
	var errs []error
	for _, t := range ts {
		if c, ok := t.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// webhooks returns the notifier of jobs' notify: webhooks, which reach
// only what url_fetch jobs may: the same egress, judged before any rate
// budget is spent and again at dial time, and never the server's own
// sockets. counted is told each result.
func webhooks(egress urlfetch.Egress, server *urlfetch.Listeners, now func() time.Time, counted func(result string)) (*notify.Webhooks, error) {
	opts := urlfetch.Options{Egress: egress, Server: server}
	client, err := urlfetch.NewClient(opts)
	if err != nil {
		return nil, err
	}
	check, err := urlfetch.NewChecker(opts)
	if err != nil {
		return nil, err
	}
	return notify.New(notify.Options{Client: client, Check: check.Check, Now: now, Counted: counted}), nil
}
