package signin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/web/signin"
)

func TestReadTokenFile(t *testing.T) {
	t.Parallel()
	const token = "s3cret-admin-token-0123456789"
	dir := t.TempDir()
	cases := []struct {
		name    string
		content string // "" for a missing file
		want    string
		err     string
	}{
		{"a token on one line is read without its newline", token + "\n", token, ""},
		{"surrounding white space is dropped", "  \n" + token + " \n\n", token, ""},
		{"a missing file is an error", "", "", "no such file"},
		{"an empty file is an error", "\n", "", "the token has 0 bytes; want at least 16"},
		{"a short token is an error", "hunter2", "", "the token has 7 bytes; want at least 16"},
		{"two tokens are an error", token + "\n" + token, "", "holds white space"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "token"+string(rune('a'+i)))
			if c.content != "" {
				if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := signin.ReadTokenFile(path)
			if c.err == "" && (err != nil || got != c.want) {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Errorf("error %v, want one containing %q", err, c.err)
			}
		})
	}
}
