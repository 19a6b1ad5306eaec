package signin_test

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/web/signin"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A new key put first seals from then on, and what the old key sealed
// still opens until the old key is dropped.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldKey, newKey := signin.NewKey(), signin.NewKey()
	writeFile(t, dir+"/keys", oldKey+"\n")
	before, err := signin.ReadKeyFile(dir + "/keys")
	if err != nil {
		t.Fatal(err)
	}
	sealed := before.Seal("p", []byte("value"))
	writeFile(t, dir+"/keys", "# rotated\n"+newKey+"\n"+oldKey+"\n")
	during, err := signin.ReadKeyFile(dir + "/keys")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := during.Open("p", sealed); err != nil || string(v) != "value" {
		t.Errorf("sealed by the old key, opened after rotation: %q, %v", v, err)
	}
	if _, err := before.Open("p", during.Seal("p", []byte("value"))); err == nil {
		t.Error("after rotation the old key still seals")
	}
	if _, err := during.Open("q", sealed); err == nil {
		t.Error("a value sealed for one purpose opened for another")
	}
	writeFile(t, dir+"/keys", newKey+"\n")
	after, err := signin.ReadKeyFile(dir + "/keys")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := after.Open("p", sealed); err == nil {
		t.Error("sealed by a dropped key, still opened")
	}
}

func TestKeyFileBadLineNamesFileAndLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, content, want string }{
		{"short key", signin.NewKey() + "\n" + base64.StdEncoding.EncodeToString([]byte("short")) + "\n", ":2:"},
		{"not base64", "# keys\nnot base64!\n", ":2:"},
		{"empty", "# nothing\n", "no key"},
	} {
		path := t.TempDir() + "/keys"
		writeFile(t, path, tt.content)
		_, err := signin.ReadKeyFile(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error naming %s and %q", tt.name, err, path, tt.want)
		}
	}
}
