package keyfuncs

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
)

// ErrInvalidOption reports a key-function option that cannot be honoured: a
// prefix length out of range, an invalid trusted-proxy prefix, an unknown
// proxy header. NewIPResolver returns errors that match it with errors.Is.
var ErrInvalidOption = errors.New("keyfuncs: invalid option")

// ProxyHeader names a forwarding header that the client IP resolver may read
// when the direct peer is a trusted proxy.
type ProxyHeader int

const (
	// XForwardedFor is "X-Forwarded-For: client, proxy1, proxy2". It is read
	// right to left across all its lines, skipping trusted hops.
	XForwardedFor ProxyHeader = iota + 1
	// XRealIP is "X-Real-IP: client", a single address set by the proxy.
	XRealIP
	// Forwarded is the RFC 7239 header, "Forwarded: for=client, for=proxy1";
	// its for= parameters are read right to left like X-Forwarded-For.
	Forwarded
)

// String returns the header's canonical name, e.g. "X-Forwarded-For".
func (h ProxyHeader) String() string {
	switch h {
	case XForwardedFor:
		return "X-Forwarded-For"
	case XRealIP:
		return "X-Real-IP"
	case Forwarded:
		return "Forwarded"
	}
	return fmt.Sprintf("ProxyHeader(%d)", int(h))
}

// lookupName returns the header's name in the canonical MIME form that
// net/http's Header.Get looks up without allocating.
func (h ProxyHeader) lookupName() string {
	if h == XRealIP {
		return "X-Real-Ip"
	}
	return h.String()
}

// Default prefix lengths of the client IP key.
const (
	// defaultIPv4Prefix keeps every IPv4 address apart.
	defaultIPv4Prefix = 32
	// defaultIPv6Prefix groups IPv6 addresses by /64, the usual allocation
	// to one site or subscriber, which can otherwise rotate through 2^64
	// addresses to dodge a per-address limit.
	defaultIPv6Prefix = 64
)

// IPResolver finds the client address of a request and turns it into a key:
//
//  1. The direct peer comes from RemoteAddr; if it cannot be parsed, the
//     answer is a *MissingKeyError (400, Source "client address").
//  2. Unless the peer is inside a trusted proxy prefix and a proxy header is
//     configured, the peer is the client: anyone else's forwarding headers
//     are forged as easily as written.
//  3. Otherwise the first configured proxy header present is used alone.
//     X-Forwarded-For and Forwarded are read right to left across all their
//     lines: trusted addresses are hops to skip, the first untrusted one is
//     the client (the leftmost when all are trusted). X-Real-IP is taken as
//     is.
//  4. A malformed entry ends the walk at the nearest address established;
//     malformed headers never cause an error.
//
// Addresses lose their IPv6 zone and IPv4-mapped ones become IPv4. The key is
// the address masked to the family's prefix length, in netip's canonical
// text ("192.0.2.7", "2001:db8:1:2::/64"). The zero value is ready to use
// (RemoteAddr only, IPv4 /32, IPv6 /64); an IPResolver is immutable and safe
// for concurrent use.
type IPResolver struct {
	trusted []netip.Prefix
	headers []ProxyHeader
	v4Bits  int // 0 means defaultIPv4Prefix
	v6Bits  int // 0 means defaultIPv6Prefix
}

// IPOption configures an IPResolver; NewIPResolver applies options in order
// and ignores nil ones.
type IPOption func(*IPResolver) error

// NewIPResolver returns a resolver configured by opts. Without options it
// behaves as the zero value. It returns an error matching ErrInvalidOption if
// an option is out of range.
func NewIPResolver(opts ...IPOption) (*IPResolver, error) {
	res := &IPResolver{}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(res); err != nil {
			return nil, err
		}
	}
	if len(res.trusted) > 0 && res.headers == nil {
		res.headers = []ProxyHeader{XForwardedFor, XRealIP}
	}
	return res, nil
}

// WithTrustedProxies sets the prefixes of the proxies whose forwarding
// headers are believed, e.g. netip.MustParsePrefix("10.0.0.0/8"). Repeated
// calls add up. Without it (the default) no forwarding header is read.
// IPv4-mapped IPv6 prefixes (::ffff:10.0.0.0/104) are stored as IPv4; an
// invalid prefix, one with a zone, or one of every address (0.0.0.0/0,
// ::/0: any client could then name its own address) is an error.
func WithTrustedProxies(prefixes ...netip.Prefix) IPOption {
	return func(res *IPResolver) error {
		for _, p := range prefixes {
			if !p.IsValid() {
				return fmt.Errorf("%w: trusted proxy prefix %q is not valid", ErrInvalidOption, p.String())
			}
			a, bits := p.Addr(), p.Bits()
			if a.Is4In6() && bits >= 96 {
				p = netip.PrefixFrom(a.Unmap(), bits-96)
			}
			if p.Bits() == 0 {
				return fmt.Errorf("%w: trusted proxy prefix %s trusts every address: any client could name its own address in a forwarding header", ErrInvalidOption, p)
			}
			res.trusted = append(res.trusted, p.Masked())
		}
		return nil
	}
}

// WithProxyHeaders sets which forwarding headers are read, in order of
// precedence, when the direct peer is a trusted proxy. The default is
// XForwardedFor then XRealIP. With no argument, no header is read even from
// trusted proxies. Configure only the headers your proxies set or overwrite:
// a header your proxy passes through untouched is the client's own text.
func WithProxyHeaders(headers ...ProxyHeader) IPOption {
	return func(res *IPResolver) error {
		for _, h := range headers {
			if h < XForwardedFor || h > Forwarded {
				return fmt.Errorf("%w: unknown proxy header %v", ErrInvalidOption, h)
			}
		}
		res.headers = append(make([]ProxyHeader, 0, len(headers)), headers...)
		return nil
	}
}

// WithPrefixes sets the prefix lengths by which clients are grouped into
// one key: v4, 1 to 32, for IPv4 (the default is 32, one key per address)
// and v6, 1 to 128, for IPv6 (the default is 64). A 0 keeps that family's
// default.
func WithPrefixes(v4, v6 int) IPOption {
	return func(res *IPResolver) error {
		if v4 < 0 || v4 > 32 {
			return fmt.Errorf("%w: IPv4 prefix length %d is outside 1..32", ErrInvalidOption, v4)
		}
		if v6 < 0 || v6 > 128 {
			return fmt.Errorf("%w: IPv6 prefix length %d is outside 1..128", ErrInvalidOption, v6)
		}
		if v4 > 0 {
			res.v4Bits = v4
		}
		if v6 > 0 {
			res.v6Bits = v6
		}
		return nil
	}
}

// RemoteIP is the KeyFunc of the zero IPResolver: the direct peer's address,
// IPv4 per address, IPv6 per /64, forwarding headers ignored. Use it when
// clients connect directly; behind a proxy it would limit the proxy as a
// whole, so configure an IPResolver with WithTrustedProxies instead.
func RemoteIP(r Request) (string, error) {
	var zero IPResolver
	return zero.Key(r)
}

// ClientIP returns the client's address as resolved by the rules of
// IPResolver, normalised but not masked: useful for logs. Its error is a
// *MissingKeyError when RemoteAddr is unusable.
func (res *IPResolver) ClientIP(r Request) (netip.Addr, error) {
	a, _, _, err := res.resolve(r)
	return a, err
}

// Key returns the client's address masked to the configured prefix length,
// as canonical text. It is a KeyFunc: pass res.Key to the middleware.
func (res *IPResolver) Key(r Request) (string, error) {
	a, host, plain, err := res.resolve(r)
	if err != nil {
		return "", err
	}
	bits := res.bitsFor(a)
	if bits == a.BitLen() && plain {
		return host, nil
	}
	p, err := a.Prefix(bits)
	if err != nil {
		// Unreachable: bits is in range and the zone is already removed.
		return "", errNoClientAddr()
	}
	return prefixText(p), nil
}

// bitsFor returns the prefix length configured for a's family.
func (res *IPResolver) bitsFor(a netip.Addr) int {
	if a.Is4() {
		if res.v4Bits == 0 {
			return defaultIPv4Prefix
		}
		return res.v4Bits
	}
	if res.v6Bits == 0 {
		return defaultIPv6Prefix
	}
	return res.v6Bits
}

// isTrusted reports whether a is inside a trusted proxy prefix.
func (res *IPResolver) isTrusted(a netip.Addr) bool {
	return slices.ContainsFunc(res.trusted, func(p netip.Prefix) bool { return p.Contains(a) })
}

// errNoClientAddr is returned when the direct peer's address is unusable.
func errNoClientAddr() error { return &MissingKeyError{Source: "client address", Status: 400} }

// resolve applies the rules documented on IPResolver. It returns the
// address, the text it was parsed from, and whether that text is the
// address's canonical form (separate results: a struct this size would be
// returned through memory).
func (res *IPResolver) resolve(r Request) (addr netip.Addr, host string, plain bool, err error) {
	if ra, ok := r.(interface{ RemoteAddrPort() netip.AddrPort }); ok {
		if ap := ra.RemoteAddrPort(); ap.IsValid() {
			addr = ap.Addr().WithZone("").Unmap()
		}
	}
	if !addr.IsValid() {
		var ok bool
		if addr, host, plain, ok = parseAddr(r.RemoteAddr()); !ok {
			return netip.Addr{}, "", false, errNoClientAddr()
		}
	}
	if len(res.headers) == 0 || !res.isTrusted(addr) {
		return addr, host, plain, nil
	}
	for _, h := range res.headers {
		values := headerValues(r, h.lookupName())
		if !present(values) {
			continue
		}
		switch h {
		case XForwardedFor:
			addr, host, plain = res.walkList(values, addr, host, plain)
			return addr, host, plain, nil
		case XRealIP:
			if a, host, plain, ok := parseAddr(values[len(values)-1]); ok {
				return a, host, plain, nil
			}
			return addr, host, plain, nil
		case Forwarded:
			fors, ok := parseForwardedFor(values)
			if !ok {
				return addr, host, plain, nil
			}
			addr, host, plain = res.walkList(fors, addr, host, plain)
			return addr, host, plain, nil
		}
	}
	return addr, host, plain, nil
}

// present reports whether any of values is not empty.
func present(values []string) bool {
	return slices.ContainsFunc(values, func(v string) bool { return v != "" })
}
