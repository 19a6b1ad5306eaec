package command_test

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/command"
)

// readSecrets is a script that tries to read what only the server's user
// may ($1, a 0600 file; the environment of the server, pid $2) and to
// signal the server, exiting 10, 11 or 12 at the first that succeeds; else
// it says who it runs as.
const readSecrets = `cat "$1" && exit 10
cat /proc/$2/environ >/dev/null && exit 11
kill -0 $2 && exit 12
echo "uid=$(id -u) gid=$(id -g) groups=$(id -G) home=$HOME user=$USER pwd=$(pwd)"`

// A command run as another user cannot read the server's 0600 files nor
// its environment, nor signal it, whether it runs in a cgroup or not; it
// has the user's uid and gid and no supplementary group of the server's.
// Before, commands always ran as the server's user, and the same script
// read the file.
func TestLaunchAsAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("switching to another user needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody here: %v", err)
	}
	// In a directory anyone may enter, so that only the file's own mode
	// keeps it from the command.
	dir, err := os.MkdirTemp("", "sundial-secret-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "token")
	if err := os.WriteFile(secret, []byte("s3cret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := command.Spec{Argv: []string{"/bin/sh", "-c", readSecrets, "sh", secret, strconv.Itoa(os.Getpid())}}
	want := "uid=" + nobody.Uid + " gid=" + nobody.Gid + " groups=" + nobody.Gid + " home=" + nobody.HomeDir + " user=nobody pwd=/"

	for _, tc := range []struct {
		name string
		new  func(*testing.T, command.Options) *command.Target
		opts command.Options
	}{
		{"without a cgroup", newTarget, command.Options{User: "nobody", Cgroup: "none"}},
		{"in a cgroup", cgroupTarget, command.Options{User: "nobody"}},
		{"by uid", newTarget, command.Options{User: nobody.Uid, Cgroup: "none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := tc.new(t, tc.opts).Launch(t.Context(), request(spec))
			lines := strings.Split(strings.TrimSpace(string(res.Log)), "\n")
			if res.Status != targets.Succeeded || lines[len(lines)-1] != want {
				t.Errorf("Launch = %v %q, log %q; want Succeeded, the log ending %q", res.Status, res.Message, res.Log, want)
			}
			if strings.Contains(string(res.Log), "s3cret") {
				t.Errorf("the command read the server's 0600 file: %q", res.Log)
			}
		})
	}
	t.Run("the same script as the server's user reads the file", func(t *testing.T) {
		t.Parallel()
		res := newTarget(t, command.Options{Cgroup: "none"}).Launch(t.Context(), request(spec))
		if res.Status != targets.Failed || res.Message != "command: exit status 10" {
			t.Errorf("Launch = %v %q; want Failed: exit status 10", res.Status, res.Message)
		}
	})
}

func TestNewRefusesAUserItCannotRunAs(t *testing.T) {
	t.Parallel()
	want := "command: user \"no-such-user-sundial\""
	if os.Geteuid() != 0 {
		want = "needs the server to run as root"
	}
	if _, err := command.New(command.Options{User: "no-such-user-sundial", Projects: []string{"ops"}}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("New = %v; want an error containing %q", err, want)
	}
	if os.Geteuid() != 0 {
		if _, err := command.New(command.Options{User: "nobody", Projects: []string{"ops"}}); err == nil || !strings.Contains(err.Error(), "needs the server to run as root") {
			t.Errorf("New(User: nobody) as uid %d = %v; want an error: needs the server to run as root", os.Geteuid(), err)
		}
	}
}
