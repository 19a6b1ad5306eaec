package main

import (
	"flag"
	"fmt"
)

// gcpProjectFlag registers --gcp-project on fs, writing into project,
// whose value is the default. --project, its name until "project" came to
// mean a Sundial project only, stays one release as an alias that warns on
// fs's output each time it is given.
func gcpProjectFlag(fs *flag.FlagSet, project *string, usage string) {
	fs.StringVar(project, "gcp-project", *project, usage)
	fs.Func("project", "deprecated: use --gcp-project", func(v string) error {
		fmt.Fprintf(fs.Output(), "%s: --project is deprecated: use --gcp-project; it will be removed in the next release\n", fs.Name())
		*project = v
		return nil
	})
}
