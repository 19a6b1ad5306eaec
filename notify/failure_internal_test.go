package notify

import (
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestAResetWhileDialingIsAHangUp: a host that accepts a connection and
// resets it at once is a hang-up, whether the reset reaches the request
// being written or, on a loaded machine, the dialer still checking that
// the connection was made; only a connection never made "cannot connect".
// The race is too rare to meet with real sockets at will, so the errors
// are built as net/http returns them.
func TestAResetWhileDialingIsAHangUp(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("http://127.0.0.1:9/services/SECRET")
	if err != nil {
		t.Fatal(err)
	}
	dial := func(errno syscall.Errno) error {
		return &url.Error{Op: "Post", URL: u.String(), Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}}
	}
	write := &url.Error{Op: "Post", URL: u.String(), Err: &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)}}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{dial(syscall.ECONNRESET), "127.0.0.1:9 closed the connection without an answer"},
		{write, "127.0.0.1:9 closed the connection without an answer"},
		{dial(syscall.ECONNREFUSED), "cannot connect to 127.0.0.1:9: connection refused"},
	} {
		if got := failure(tc.err, u, time.Second).Error(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.err, got, tc.want)
		}
	}
}
