package urlfetch

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
)

// Checker judges a URL's destination by an Egress before anything is done
// for it: what can be judged without a lookup, the host name against the
// lists and, where the URL names an address, that address and port. It is
// the cheap check that goes before any work a project's config can cause
// (a notification's rate budget, say); the dial judges every address a
// name resolves to again, as for every request of the client.
type Checker struct {
	p *egress
}

// NewChecker returns a Checker of opts' Egress and Server, or an error
// naming a bad entry in the egress' lists.
func NewChecker(opts Options) (*Checker, error) {
	p, err := compile(opts.Egress, opts.Server)
	if err != nil {
		return nil, err
	}
	return &Checker{p: p}, nil
}

// Check returns the egress' refusal of rawURL's destination, if the host
// name or address alone is refused; nil otherwise. Its error names the
// host or the address, never the URL's path or query, which are often
// its secret.
func (c *Checker) Check(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return errors.New("not an http(s)://HOST/... URL")
	}
	listed, err := c.p.host(u.Hostname())
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return nil // a name: judged by its addresses when dialled
	}
	port, err := portOf(u)
	if err != nil {
		return err
	}
	return c.p.addr(a, port, listed)
}

// portOf is the port a URL connects to: its own, or its scheme's.
func portOf(u *url.URL) (uint16, error) {
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("port %q: want 1 to 65535", p)
		}
		return uint16(n), nil
	}
	if u.Scheme == "https" {
		return 443, nil
	}
	return 80, nil
}

// Refusal returns the egress' refusal in err's chain, or nil if err is
// something else. Its text names the destination (a host or an address)
// and why it was refused, and nothing of the URL beyond the host: it can
// be shown where a URL must not be.
func Refusal(err error) error {
	var r *refusal
	if errors.As(err, &r) {
		return r
	}
	return nil
}
