package urlfetch_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/targets/urlfetch"
)

// TestCheckerJudgesWhatNeedsNoLookup: a name or address the egress refuses
// is refused before anything is sent, by the same rules and words as the
// dial, naming the destination and never the URL's path or query; a name
// is left to the dial, which judges its addresses.
func TestCheckerJudgesWhatNeedsNoLookup(t *testing.T) {
	self, err := net.ResolveTCPAddr("tcp", "127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	var server urlfetch.Listeners
	if err := server.Add(self); err != nil {
		t.Fatal(err)
	}
	c, err := urlfetch.NewChecker(urlfetch.Options{Egress: urlfetch.Egress{Allow: []string{"127.0.0.1"}, Deny: []string{"*.blocked.example"}}, Server: &server})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url, want string
	}{
		{"https://hooks.example.com/services/T/B/SECRET", ""},
		{"http://localhost:1/SECRET", ""}, // a name: its addresses are judged when dialled
		{"http://127.0.0.1:9/SECRET?token=SECRET", ""},
		{"http://10.0.0.1/SECRET", "destination 10.0.0.1 refused: a private address"},
		{"http://[::1]:9/SECRET", "destination ::1 refused: a loopback address"},
		{"http://0x7f.1:9/SECRET", ""}, // not an address literal to net/netip: the dial resolves and judges it
		{"http://169.254.169.254/SECRET", "destination 169.254.169.254 refused: a cloud metadata address"},
		{"http://metadata.google.internal/SECRET", "destination metadata.google.internal refused: a cloud metadata service"},
		{"https://a.blocked.example/SECRET", "destination a.blocked.example refused: on the server's deny list"},
		{"http://127.0.0.1:8080/SECRET", "destination 127.0.0.1:8080 refused: the server itself"},
		{"http://127.0.0.1:99999/SECRET", `port "99999"`},
		{"/SECRET", "not an http(s)://HOST/... URL"},
	} {
		err := c.Check(tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want it left to the dial", tc.url, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v; want %q", tc.url, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "SECRET"):
			t.Errorf("%s: the refusal quotes the URL's path: %v", tc.url, err)
		case err != nil && strings.HasPrefix(tc.want, "destination") && urlfetch.Refusal(err) == nil:
			t.Errorf("%s: Refusal does not find the refusal in %v", tc.url, err)
		}
	}
	if urlfetch.Refusal(errors.New("destination 10.0.0.1 refused: a private address")) != nil {
		t.Error("Refusal finds a refusal in an error that only reads like one")
	}
}
