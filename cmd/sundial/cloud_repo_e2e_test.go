package main

import (
	"encoding/json"
	"fmt"
	"github.com/sundial-cron/sundial/server"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
)

// The cloud shape reading a config repo, on the Datastore emulator: two
// instances over one store; one cron refresh on one instance, and both
// report the commit it applied; then both refresh a new commit at once,
// which is harmless: both report it, with no error.
func TestCloudShapeInstancesAgreeOnTheConfigRepo(t *testing.T) {
	t.Parallel()
	emulatortest.Datastore(t)
	ts, err := cloudtaskstest.Start(cloudtaskstest.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	go ts.Run(t.Context())

	repo := newConfigRepo(t)
	job := func(schedule string) string {
		return fmt.Sprintf("jobs:\n  - id: report\n    schedule: %q\n    noop: {}\n", schedule)
	}
	first := repo.commit("billing: hourly", map[string]string{"billing": job("@hourly")})
	token := "e2e-admin-token-0123456789abcdef"
	tokenFile := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	namespace := fmt.Sprintf("e2e-repo-%d", time.Now().UnixNano())
	var instances []string
	for range 2 {
		addr := freeAddr(t)
		serve(t, "--backend", "cloud", "--platform", "appengine",
			"--gcp-project", "sundial-e2e", "--namespace", namespace,
			"--tasks-location", "us-central1", "--tasks-queue", "sundial-tasks", "--tasks-endpoint", ts.Addr(),
			"--listen", addr, "--config-repo", "file://"+repo.dir, "--config-path", "projects",
			"--admin-token-file", tokenFile)
		instances = append(instances, "http://"+addr)
	}
	revisions := func() []configStatus {
		var out []configStatus
		for _, base := range instances {
			out = append(out, cloudProjectConfig(t, base, token, "billing"))
		}
		return out
	}

	cronCall(t, instances[0]+server.RefreshPath, nil)
	for i, s := range revisions() {
		if s.Revision != first || s.Error != "" {
			t.Errorf("instance %d after one refresh on instance 0: %+v; want %s", i, s, first)
		}
	}

	second := repo.commit("billing: daily", map[string]string{"billing": job("@daily")})
	var wg sync.WaitGroup
	for _, base := range instances {
		wg.Go(func() { cronCall(t, base+server.RefreshPath, nil) })
	}
	wg.Wait()
	for i, s := range revisions() {
		if s.Revision != second || s.Error != "" {
			t.Errorf("instance %d after both refreshed at once: %+v; want %s and no error", i, s, second)
		}
	}
}

// cloudProjectConfig reads a project's config status from an instance's
// API as the administrator.
func cloudProjectConfig(t *testing.T, base, token, project string) configStatus {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/api/v1/projects", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Projects []struct {
			Project string       `json:"project"`
			Config  configStatus `json:"config"`
		} `json:"projects"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/api/v1/projects: %s, %v", base, resp.Status, err)
	}
	for _, p := range out.Projects {
		if p.Project == project {
			return p.Config
		}
	}
	t.Fatalf("%s: project %s is not listed", base, project)
	return configStatus{}
}
