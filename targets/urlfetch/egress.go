package urlfetch

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Egress says which destinations the target may call. It is the server
// operator's, not a job's: a job config cannot widen it.
//
// A destination is judged in this order: the server's own listening
// sockets (Listeners) are refused whatever the lists say; then Deny, then
// Allow, then the defaults. The defaults refuse cloud metadata services,
// link-local, unspecified and multicast addresses, loopback (127.0.0.0/8,
// ::1) and the private ranges (10/8, 172.16/12, 192.168/16, 100.64/10,
// fc00::/7, fec0::/10): a job reaches a service on the server's machine or
// network only where the operator names it in Allow.
type Egress struct {
	// Allow lists CIDRs, IPs and host names that are allowed even where the
	// defaults refuse them. A host name matches exactly, or "*.example.com"
	// matches every name under example.com; an allowed name may resolve to
	// any address that Deny does not list. A metadata address is allowed
	// only by its own name or by an entry for that one address, not by a
	// wider range that holds it (fc00::/7 holds AWS's).
	Allow []string
	// Deny lists CIDRs, IPs and host names that are always refused.
	Deny []string
}

// metadataHosts are the names of cloud metadata services; they are refused
// by name too, so a refusal says what the job tried to reach.
var metadataHosts = []string{"metadata.google.internal", "metadata.goog", "metadata"}

// metadataAddrs are metadata services outside link-local: AWS's IPv6
// endpoint (inside fc00::/7, which an operator may allow) and
// Alibaba's (inside 100.64/10).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

var (
	sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")
	// thisNetwork is 0.0.0.0/8; Linux connects 0.0.0.0 to the local host.
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	// siteLocal is fec0::/10: deprecated, and private where it is used.
	siteLocal = netip.MustParsePrefix("fec0::/10")
	// teredo addresses reach an IPv4 host through a tunnel, with the
	// address obfuscated: nothing to judge, so they are refused.
	teredo = netip.MustParsePrefix("2001::/32")
)

// The IPv6 ranges whose addresses reach an IPv4 address through a
// translator or a tunnel; each is judged as the IPv4 address it reaches,
// so 127.0.0.1 is refused however it is spelled.
var (
	// nat64 (RFC 6052's well-known prefix): the last 32 bits.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// localNAT64 (RFC 8215), a /48: bits 48-63 and 72-87, around the
	// u octet.
	localNAT64 = netip.MustParsePrefix("64:ff9b:1::/48")
	// sixToFour (RFC 3056): bits 16-47.
	sixToFour = netip.MustParsePrefix("2002::/16")
	// compatible is the deprecated IPv4-compatible form ::a.b.c.d, which
	// Linux still connects to a.b.c.d.
	compatible = netip.MustParsePrefix("::/96")
)

// reachedIPv4 returns the IPv4 address an IPv6 address reaches through a
// translator or a tunnel that embeds it, if any.
func reachedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case !a.Is6():
		return a, false
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case localNAT64.Contains(a):
		return netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case compatible.Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return a, false
}

// egress is an Egress with its lists parsed, and the server's own sockets.
type egress struct {
	allowNets, denyNets   []netip.Prefix
	allowHosts, denyHosts []string
	self                  *Listeners
}

func compile(e Egress, self *Listeners) (*egress, error) {
	if self == nil {
		self = &Listeners{}
	}
	c := &egress{self: self}
	var err error
	if c.allowNets, c.allowHosts, err = parseList("allow", e.Allow); err != nil {
		return nil, err
	}
	if c.denyNets, c.denyHosts, err = parseList("deny", e.Deny); err != nil {
		return nil, err
	}
	return c, nil
}

func parseList(name string, entries []string) (nets []netip.Prefix, hosts []string, err error) {
	for _, e := range entries {
		if pfx, err := netip.ParsePrefix(e); err == nil {
			nets = append(nets, pfx.Masked())
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil {
			nets = append(nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		h := normalHost(e)
		if h == "" || strings.ContainsAny(h, "/: ") || strings.Contains(strings.TrimPrefix(h, "*."), "*") {
			return nil, nil, fmt.Errorf("url_fetch: %s list: bad entry %q: want a CIDR, an IP, a host name or *.domain", name, e)
		}
		hosts = append(hosts, h)
	}
	return nets, hosts, nil
}

func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

func matchHost(patterns []string, host string) bool {
	for _, p := range patterns {
		if p == host || strings.HasPrefix(p, "*.") && strings.HasSuffix(host, p[1:]) {
			return true
		}
	}
	return false
}

// refusal is the error of a destination the egress refuses.
type refusal struct {
	dest, why string
}

func (r *refusal) Error() string {
	return fmt.Sprintf("destination %s refused: %s", r.dest, r.why)
}

// host judges a host name (or IP literal) before it is resolved. It returns
// listed=true if the operator allowed the name, which lets the addresses it
// resolves to past the defaults.
func (e *egress) host(h string) (listed bool, err error) {
	h = normalHost(h)
	if _, err := netip.ParseAddr(h); err == nil {
		return false, nil // judged by address when dialled
	}
	switch {
	case matchHost(e.denyHosts, h):
		return false, &refusal{h, "on the server's deny list"}
	case matchHost(e.allowHosts, h):
		return true, nil
	case matchHost(metadataHosts, h):
		return false, &refusal{h, "a cloud metadata service"}
	}
	return false, nil
}

// addr judges the address and port about to be dialled. Judging the
// dialled address, not the name in the URL, is what defeats DNS rebinding
// and every other spelling of an address: a name that resolved to a public
// address when checked cannot resolve to a refused one when dialled, and
// 127.1, 0x7f000001 or [::ffff:127.0.0.1] are 127.0.0.1 by then.
func (e *egress) addr(a netip.Addr, port uint16, hostListed bool) error {
	a = a.Unmap()
	if v4, ok := reachedIPv4(a); ok {
		a = v4
	}
	in := func(nets []netip.Prefix) bool {
		for _, n := range nets {
			if n.Contains(a) {
				return true
			}
		}
		return false
	}
	exactly := func(nets []netip.Prefix) bool {
		return slices.Contains(nets, netip.PrefixFrom(a, a.BitLen()))
	}
	refuse := func(why string) error { return &refusal{a.String(), why} }
	if ln, ok := e.self.reaches(a, port); ok {
		return &refusal{netip.AddrPortFrom(a, port).String(), fmt.Sprintf("the server itself (it listens on %s): jobs may not call its API, whatever the allow list says", ln)}
	}
	switch {
	case in(e.denyNets):
		return refuse("on the server's deny list")
	case isMetadata(a) && !hostListed && !exactly(e.allowNets):
		return refuse("a cloud metadata address")
	case hostListed || in(e.allowNets):
		return nil
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return refuse("a link-local address")
	case a.IsUnspecified() || a.IsMulticast() || thisNetwork.Contains(a):
		return refuse("not a unicast address")
	case teredo.Contains(a):
		return refuse("a Teredo tunnel address, whose IPv4 end cannot be judged")
	case a.IsLoopback():
		return refuse("a loopback address, which this server's allow list (--url-allow) does not name")
	case a.IsPrivate() || sharedAddressSpace.Contains(a) || siteLocal.Contains(a):
		return refuse("a private address, which this server's allow list (--url-allow) does not name")
	}
	return nil
}

func isMetadata(a netip.Addr) bool {
	for _, m := range metadataAddrs {
		if a == m {
			return true
		}
	}
	return false
}
