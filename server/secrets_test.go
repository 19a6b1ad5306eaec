package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With --command-user, the server refuses to start while any of its
// secrets is open to other users: each file a setting names, the config
// directory and the Google credentials file. Before, the config repos'
// credentials, the webhook secret, the Google credentials and the config
// directory (every project's url headers) were not checked.
func TestCommandUserSecretsCoverEverySecret(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	s := Defaults(func(string) string { return "" })
	s.DB, s.Configs.Dir = path("sundial.db"), path("configs")
	s.SignIn.AdminTokenFile, s.Push.SecretFile = path("admin-token"), path("push-secret")
	s.SignIn.StaticTokensFile, s.SignIn.CookieKeyFile, s.SignIn.OIDCClientSecretFile = path("tokens"), path("cookie-keys"), path("oidc-secret")
	env := map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": path("credentials.json")}
	private := []string{"sundial.db", "admin-token", "push-secret", "tokens", "cookie-keys", "oidc-secret", "credentials.json",
		"config-token", "ssh-key", "webhook-secret"}
	for _, name := range private {
		if err := os.WriteFile(path(name), []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(path("configs"), 0o700); err != nil {
		t.Fatal(err)
	}
	repo := s
	repo.Configs.Dir, repo.Configs.Repo = "", "https://example.com/configs.git"
	repo.Configs.TokenFile, repo.Configs.SSHKeyFile, repo.Configs.WebhookSecretFile = path("config-token"), path("ssh-key"), path("webhook-secret")

	for _, c := range []struct {
		s    Settings
		open string
	}{
		{s, ""},
		{s, "configs"},
		{s, "credentials.json"},
		{s, "admin-token"},
		{repo, "config-token"},
		{repo, "ssh-key"},
		{repo, "webhook-secret"},
	} {
		if c.open != "" {
			if err := os.Chmod(path(c.open), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		err := checkPrivate("nobody", c.s.secretFiles(func(k string) string { return env[k] }))
		switch {
		case c.open == "" && err != nil:
			t.Errorf("every secret private: %v", err)
		case c.open != "" && (err == nil || !strings.Contains(err.Error(), path(c.open)+" is readable by users other than the server's")):
			t.Errorf("%s open to others: %v; want it refused", c.open, err)
		}
		if c.open != "" {
			mode := os.FileMode(0o600)
			if c.open == "configs" {
				mode = 0o700
			}
			if err := os.Chmod(path(c.open), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
}
