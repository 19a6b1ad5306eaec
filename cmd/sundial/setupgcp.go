package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	gcloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	scheduler "cloud.google.com/go/scheduler/apiv1"

	"github.com/sundial-cron/sundial/deploy/gcpsetup"
	"github.com/sundial-cron/sundial/internal/standin"
	"github.com/sundial-cron/sundial/server"
)

// cronJobs are the Cloud Scheduler jobs that stand in for cron.yaml on
// Cloud Run, and the endpoints they call.
var cronJobs = []gcpsetup.Pass{
	{Job: "sundial-watchdog", Path: server.WatchdogPath},
	{Job: "sundial-refresh", Path: server.RefreshPath},
}

// runSetupGCP runs "sundial setup-gcp": it creates or updates the Cloud
// Tasks queue and the Cloud Scheduler jobs of a Cloud Run deployment and
// prints a line per resource. The flags default to the environment serve
// --backend=cloud reads, so one set of variables serves both. It exits
// exitUsage on bad settings, before any call, and 1 when a call fails.
func runSetupGCP(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sundial setup-gcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s gcpsetup.Settings
	cloud := server.Defaults(os.Getenv).Cloud
	s.Project = cloud.Project
	gcpProjectFlag(fs, &s.Project, "the Google Cloud project (default $GOOGLE_CLOUD_PROJECT)")
	fs.StringVar(&s.Location, "location", cloud.Location, "the region of the queue and the scheduler jobs (default $SUNDIAL_TASKS_LOCATION)")
	fs.StringVar(&s.Queue, "queue", cloud.Queue, "the Cloud Tasks queue (default $SUNDIAL_TASKS_QUEUE)")
	fs.StringVar(&s.PublicURL, "public-url", cloud.PublicURL, "the Cloud Run service's URL (default $SUNDIAL_URL)")
	fs.StringVar(&s.Invoker, "invoker", cloud.Invoker, "the service account Cloud Scheduler signs as (default $SUNDIAL_INVOKER)")
	dryRun := fs.Bool("dry-run", false, "read and report what would change, writing nothing")
	tasksEndpoint := fs.String("tasks-endpoint", "", "host:port of a Cloud Tasks stand-in, spoken to without TLS or credentials (local runs only)")
	schedulerEndpoint := fs.String("scheduler-endpoint", "", "host:port of a Cloud Scheduler stand-in, likewise")
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err == nil {
		s.Passes = cronJobs
		err = s.Validate()
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial setup-gcp: %v\n", err)
		}
		return exitUsage
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tasks, err := gcloudtasks.NewClient(ctx, standin.ClientOptions(*tasksEndpoint)...)
	if err != nil {
		fmt.Fprintf(stderr, "sundial setup-gcp: cloud tasks: %v\n", err)
		return 1
	}
	defer tasks.Close()
	sched, err := scheduler.NewCloudSchedulerClient(ctx, standin.ClientOptions(*schedulerEndpoint)...)
	if err != nil {
		fmt.Fprintf(stderr, "sundial setup-gcp: cloud scheduler: %v\n", err)
		return 1
	}
	defer sched.Close()

	c := gcpsetup.Clients{Tasks: tasks, Scheduler: sched}
	apply := c.Apply
	if *dryRun {
		apply = c.Plan
	}
	results, err := apply(ctx, s)
	for _, r := range results {
		fmt.Fprintln(stdout, r)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sundial setup-gcp: %v\n", err)
		return 1
	}
	return 0
}
