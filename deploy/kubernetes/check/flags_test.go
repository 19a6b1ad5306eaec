package check

import (
	"slices"
	"testing"
)

func TestEveryServeArgumentIsAFlagOfServe(t *testing.T) {
	m := load(t)
	c := container(t, m)
	if len(c.Command) != 0 {
		t.Errorf("command %q replaces the image's entrypoint, the sundial binary", c.Command)
	}
	h := help(t)
	for flag := range serveArgs(t, c.Args) {
		if _, ok := h.usage[flag]; !ok {
			t.Errorf("--%s is not a flag of sundial serve", flag)
		}
	}
}

// goEnv are the variables of Go's runtime the container may set.
var goEnv = []string{"GOMEMLIMIT", "GOMAXPROCS", "GOGC", "GODEBUG"}

func TestEveryVariableIsOneServeReads(t *testing.T) {
	m := load(t)
	c := container(t, m)
	h := help(t)
	names := map[string]string{}
	for _, e := range c.Env {
		names[e.Name] = "env"
	}
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef == nil || m.configMaps[e.ConfigMapRef.Name] == nil {
			continue
		}
		if e.Prefix != "" {
			t.Errorf("envFrom %s has a prefix", e.ConfigMapRef.Name)
		}
		for k := range m.configMaps[e.ConfigMapRef.Name].Data {
			names[k] = "ConfigMap " + e.ConfigMapRef.Name
		}
	}
	for name, from := range names {
		if !h.env[name] && !slices.Contains(goEnv, name) {
			t.Errorf("%s (%s) is not a variable sundial serve -h names, nor Go's", name, from)
		}
	}
}
