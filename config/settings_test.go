package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/config"
)

func TestReadSettings(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, content string) string {
		path := filepath.Join(t.TempDir(), "access.yaml")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Run("a valid file", func(t *testing.T) {
		t.Parallel()
		s, err := config.ReadSettings(write(t, `administrators: [user:Lead@example.com, group:admins]
groups:
  admins: [user:alice@example.com, serviceAccount:ci@p.iam.gserviceaccount.com]
  billing: [user:bob@example.com]
allow_anonymous: true
`))
		if err != nil {
			t.Fatal(err)
		}
		want := access.Settings{
			Administrators: []access.Member{"user:lead@example.com", "group:admins"},
			Groups: map[string][]access.Identity{
				"admins":  {"user:alice@example.com", "serviceAccount:ci@p.iam.gserviceaccount.com"},
				"billing": {"user:bob@example.com"},
			},
			AllowAnonymous: true,
		}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("got %+v\nwant %+v", s, want)
		}
	})
	for _, tc := range []struct{ name, content, want string }{
		{"an unknown field", "administrators: []\nlocal_admin: true\n", ":2: local_admin: unknown field"},
		{"a malformed administrator", "administrators: [alice@example.com]\n", ":1: administrators[0]: member"},
		{"a group in a group", "groups:\n  a: [group:b]\n  b: [user:b@example.com]\n", ":2: groups.a[0]:"},
		{"a group given twice", "groups:\n  a: [user:a@example.com]\n  a: [user:b@example.com]\n", ":3: groups.a: given twice"},
		{"an administrator group not defined", "administrators: [group:nobody]\n", "group \"nobody\" is not defined"},
		{"a word for a bool", "allow_anonymous: yes\n", ":1: allow_anonymous:"},
		{"local as a member", "groups:\n  a: [local]\n", "group a: identity \"local\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := write(t, tc.content)
			_, err := config.ReadSettings(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want it to name %s and say %q", err, path, tc.want)
			}
		})
	}
	t.Run("a link is not read", func(t *testing.T) {
		t.Parallel()
		link := filepath.Join(t.TempDir(), "access.yaml")
		if err := os.Symlink(write(t, "administrators: []\n"), link); err != nil {
			t.Fatal(err)
		}
		if _, err := config.ReadSettings(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("error %v; want the link refused", err)
		}
	})
}
