package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/sundial-cron/sundial/targets/urlfetch"
)

// failure says why a request to webhook u got no answer, naming u's host
// and the kind of failure and nothing else. A webhook's path and query are
// often its secret (Slack's and Chat's are), and the transport's own text
// quotes the whole URL ("Post \"https://hooks.slack.com/services/…\": ...")
// or a redirect's: so the message is made here from what the error is,
// never from its text, and every reader of the invocation's log and of
// the server's log sees the host alone.
func failure(err error, u *url.URL, timeout time.Duration) error {
	host := u.Host
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
		if r, perr := url.Parse(ue.URL); perr == nil && (r.Host != u.Host || r.Path != u.Path || r.RawQuery != u.RawQuery) {
			host += " (after a redirect)"
		}
	}
	var (
		dns    *net.DNSError
		op     *net.OpError
		errno  syscall.Errno
		cert   *tls.CertificateVerificationError
		record tls.RecordHeaderError
		alert  tls.AlertError
		x509u  x509.UnknownAuthorityError
		x509h  x509.HostnameError
		x509c  x509.CertificateInvalidError
	)
	switch {
	case urlfetch.Refusal(err) != nil:
		return urlfetch.Refusal(err)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Errorf("no answer from %s within %s", host, timeout)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("the request to %s was cancelled (the server is stopping)", host)
	case errors.As(err, &dns):
		why := "the lookup failed"
		if dns.IsNotFound {
			why = "no such host"
		}
		return fmt.Errorf("cannot resolve %s: %s", host, why)
	case errors.As(err, &cert), errors.As(err, &x509u), errors.As(err, &x509h), errors.As(err, &x509c):
		return fmt.Errorf("the TLS certificate of %s does not verify", host)
	case errors.As(err, &record):
		return fmt.Errorf("%s does not answer TLS", host)
	case errors.As(err, &alert):
		return fmt.Errorf("the TLS handshake with %s failed", host)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		// A host that closes before it answers is seen as an end of file
		// or, when the request was still being written, as a reset: the
		// same hang-up either way. A reset can even end the dial: the
		// connection was made, and reset before the dialer looked.
		return fmt.Errorf("%s closed the connection without an answer", host)
	case errors.As(err, &op) && errors.As(err, &errno) && op.Op == "dial":
		return fmt.Errorf("cannot connect to %s: %s", host, errno)
	case errors.As(err, &op) && errors.As(err, &errno):
		return fmt.Errorf("the connection to %s failed: %s", host, errno)
	}
	return fmt.Errorf("the request to %s failed", host)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
