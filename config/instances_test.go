package config_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// instance is one server process over a shared SQLite file: its own
// store handle, engine and refresher, as in the cloud shape, where only
// the instance cron calls refreshes.
type instance struct {
	st    *sqlite.Store
	eng   *engine.Engine
	fresh *config.Refresher
}

func newInstance(t *testing.T, e *env, db string) *instance {
	t.Helper()
	st, err := sqlite.Open(db, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var eng *engine.Engine
	disp := local.New(st, func(ctx context.Context, tk task.Task) error { return eng.HandleTask(ctx, tk) }, local.Options{Now: e.clock})
	eng = engine.New(st, disp, e.tgts, engine.Options{Now: e.clock})
	return &instance{st: st, eng: eng, fresh: config.NewRefresher(e.dir, eng, st, config.RefresherOptions{Targets: e.tgts, Now: e.clock})}
}

// TestEveryInstanceSeesTheConfigStatusOneRefreshed: the revision one
// instance applied, and the error of a revision it refused, are in the
// store, where another instance that never refreshed reads them, in its
// refresher's Status and in its API, which lists a project whose only
// revision was refused.
func TestEveryInstanceSeesTheConfigStatusOneRefreshed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	db := filepath.Join(t.TempDir(), "shared.db")
	first, second := newInstance(t, e, db), newInstance(t, e, db)

	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n")
	if err := first.fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	applied, ok, err := second.fresh.ProjectStatus(e.ctx, "billing")
	if err != nil || !ok || applied.Revision == "" || applied.Jobs != 1 || applied.Error != "" || !applied.LoadedAt.Equal(t0) {
		t.Fatalf("the second instance sees billing as %+v, %v, %v; want the revision the first applied", applied, ok, err)
	}
	e.advance(time.Minute)
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"61 * * * *\"\n    noop: {}\n")
	e.write("fresh.yaml", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n")
	if err := first.fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}

	statuses, err := second.fresh.Status(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(statuses) != 2 {
		t.Fatalf("the second instance has statuses %+v; want billing's and fresh's", statuses)
	}
	billing, fresh := statuses[0], statuses[1]
	if billing.Revision != applied.Revision || !billing.LoadedAt.Equal(t0) || billing.Jobs != 1 ||
		!strings.Contains(billing.Error, "billing.yaml") || !billing.ErrorAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("billing: %+v; want the revision applied at %v and the newer one's error", billing, t0)
	}
	if fresh.Project != "fresh" || fresh.Revision != "" || !strings.Contains(fresh.Error, "fresh.yaml") {
		t.Errorf("fresh: %+v; want no revision and its error", fresh)
	}

	const token = "instances-test-token"
	roles, err := access.NewRoles(access.Settings{Administrators: []access.Member{access.Member(signin.AdminTokenIdentity)}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(web.Options{Engine: second.eng, Store: second.st, Authenticators: signin.Chain{signin.AdminToken(token)}, Roles: roles}))
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/projects", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Projects []struct {
			Project string
			Config  struct{ Revision, Error string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/projects: %d, %v", resp.StatusCode, err)
	}
	got := map[string][2]string{}
	for _, p := range body.Projects {
		got[p.Project] = [2]string{p.Config.Revision, p.Config.Error}
	}
	want := map[string][2]string{"billing": {billing.Revision, billing.Error}, "fresh": {"", fresh.Error}}
	if len(got) != len(want) || got["billing"] != want["billing"] || got["fresh"] != want["fresh"] {
		t.Errorf("the second instance's API lists %v; want %v", got, want)
	}
}
