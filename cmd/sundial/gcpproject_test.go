package main

import (
	"strings"
	"testing"
)

const projectDeprecated = "--project is deprecated: use --gcp-project; it will be removed in the next release"

// --gcp-project names the Google Cloud project of serve and setup-gcp;
// --project still does, for one release, and warns each time it is given.
func TestProjectIsADeprecatedAliasOfGCPProject(t *testing.T) {
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	cloud := []string{"--backend", "cloud", "--platform", "appengine", "--tasks-location", "l"}
	for _, tc := range []struct {
		name string
		args []string
		warn bool
	}{
		{"--gcp-project names it without a warning", append(cloud, "--gcp-project", "acme"), false},
		{"--project names it and warns", append(cloud, "--project", "acme"), true},
		{"the last of the two given wins", append(cloud, "--gcp-project", "other", "--project=acme"), true},
	} {
		t.Run("serve: "+tc.name, func(t *testing.T) {
			var stderr strings.Builder
			s, err := parseServe(tc.args, &stderr)
			if err != nil || s.Cloud.Project != "acme" {
				t.Errorf("project %q, error %v; want acme and no error", s.Cloud.Project, err)
			}
			if warned := strings.Contains(stderr.String(), "sundial serve: "+projectDeprecated); warned != tc.warn {
				t.Errorf("stderr %q: warned %t, want %t", stderr.String(), warned, tc.warn)
			}
		})
	}
	// Without a location setup-gcp stops before any call, naming every
	// setting missing: the project is not one of them.
	for _, tc := range []struct {
		flag string
		warn bool
	}{{"--gcp-project=sundial-test", false}, {"--project=sundial-test", true}} {
		t.Run("setup-gcp: "+tc.flag, func(t *testing.T) {
			_, stderr, status := runCLI("setup-gcp", tc.flag, "--location=")
			if status != exitUsage || !strings.Contains(stderr, "location: missing") || strings.Contains(stderr, "project: missing") {
				t.Errorf("status %d, stderr:\n%s\nwant %d, location missing and the project given", status, stderr, exitUsage)
			}
			if warned := strings.Contains(stderr, "sundial setup-gcp: "+projectDeprecated); warned != tc.warn {
				t.Errorf("stderr %q: warned %t, want %t", stderr, warned, tc.warn)
			}
		})
	}
}
