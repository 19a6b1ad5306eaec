package config_test

import (
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/swarming"
)

// A project runs Swarming tasks only in the realms the operator granted
// it: a config naming another is refused at load, naming the file, line
// and field; a bad spec is refused naming its field; granted realms, by
// name or by LUCI project, are accepted.
func TestParseRefusesSwarmingRealmsNotGranted(t *testing.T) {
	t.Parallel()
	var grants []swarming.RealmGrant
	for _, e := range []string{"ci=acme:ci", "infra=chrome:*"} {
		g, err := swarming.ParseRealmGrant(e)
		if err != nil {
			t.Fatal(err)
		}
		grants = append(grants, g)
	}
	tgt, err := swarming.New(swarming.Options{Servers: []string{"https://swarming.example.com"}, Grants: grants})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]targets.Target{"swarming": tgt}
	job := func(realm, pool string) string {
		return "jobs:\n  - id: build\n    schedule: \"@hourly\"\n    swarming:\n      server: https://swarming.example.com\n      pool: " + pool + "\n      command: [run]\n      realm: " + realm + "\n"
	}

	path, p, err := parseFile(t, "ci.yaml", job("infra:prod", "ci"), targets)
	want := path + ":8: jobs[0].swarming.realm: project ci may not run Swarming tasks in realm infra:prod"
	if p != nil || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse(ci.yaml) = %v, %v; want no project and the error %q", p, err, want)
	}
	if _, p, err := parseFile(t, "ci.yaml", job("acme:ci", "\"\""), targets); p != nil || err == nil || !strings.Contains(err.Error(), "pool is missing") {
		t.Errorf("Parse(ci.yaml without a pool) = %v, %v; want it refused naming the pool", p, err)
	}
	for _, tc := range []struct{ file, realm string }{{"ci.yaml", "acme:ci"}, {"infra.yaml", "chrome:try"}} {
		if _, p, err := parseFile(t, tc.file, job(tc.realm, "ci"), targets); err != nil || len(p.Jobs) != 1 {
			t.Errorf("Parse(%s in realm %s) = %v; want its job", tc.file, tc.realm, err)
		}
	}
}
