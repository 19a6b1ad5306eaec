package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundial-cron/sundial/client"
	"github.com/sundial-cron/sundial/schedule"
)

// cliInstance is an instance as GET /api/v1/instances gives it.
type cliInstance struct {
	ID, Host, Version string
	PID               int
	Started, Seen     time.Time
	Alive, Self       bool
	SettingsDiffer    []string `json:"settings_differ"`
}

// printInstances prints the instances serving from the server's
// database, one a line, and returns an error naming those alive that were
// given other settings than the one that answered, so that scripts see it
// in the exit status; raw prints the API's JSON instead.
func printInstances(ctx context.Context, c *client.Client, raw bool, now time.Time, stdout io.Writer) error {
	var v struct{ Instances []cliInstance }
	err := call(ctx, c, "GET", "/api/v1/instances", nil, raw, stdout, &v, func() {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "INSTANCE\tHOST\tPID\tVERSION\tSTARTED\tSEEN\tSTATE\tSETTINGS")
		for _, in := range v.Instances {
			state, settings := "stopped", "same"
			if in.Alive {
				state = "alive"
			}
			if in.Self {
				settings = "(this one's)"
			} else if len(in.SettingsDiffer) > 0 {
				settings = "differ: " + strings.Join(in.SettingsDiffer, ", ")
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s ago\t%s\t%s\n", in.ID, in.Host, in.PID, in.Version,
				in.Started.UTC().Format(time.RFC3339), schedule.ShortDuration(max(now.Sub(in.Seen), 0).Round(time.Second)), state, settings)
		}
		tw.Flush()
	})
	if err != nil {
		return err
	}
	var differ []string
	for _, in := range v.Instances {
		if in.Alive && len(in.SettingsDiffer) > 0 {
			differ = append(differ, in.ID+" ("+strings.Join(in.SettingsDiffer, ", ")+")")
		}
	}
	if len(differ) > 0 {
		return fmt.Errorf("%d instance(s) alive were given other settings than the one that answered, which every instance must share: %s", len(differ), strings.Join(differ, "; "))
	}
	return nil
}
