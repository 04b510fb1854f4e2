package keyfuncs

import (
	"net/netip"
	"strings"
)

// parseAddr parses the address forms found in RemoteAddr and in forwarding
// headers: "ip", "ip:port" (IPv4 only: a bare IPv6 address has colons of its
// own), "[ipv6]", "[ipv6]:port", each with an optional IPv6 zone, surrounded
// by optional spaces or tabs. The result has its zone removed and IPv4-mapped
// IPv6 addresses turned into IPv4. host is the address text inside s; plain
// reports that host is already the canonical text of the result, so a caller
// can reuse it instead of formatting the address again.
func parseAddr(s string) (addr netip.Addr, host string, plain bool, ok bool) {
	s = trimBlanks(s)
	if s == "" {
		return netip.Addr{}, "", false, false
	}
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 || !validPortSuffix(s[end+1:]) {
			return netip.Addr{}, "", false, false
		}
		host = s[1:end]
	} else if i := strings.IndexByte(s, ':'); i >= 0 && strings.IndexByte(s[i+1:], ':') < 0 {
		// One colon: an IPv4 address with a port (IPv6 text has at least
		// two). Checked before netip.ParseAddr, whose error allocates.
		if !validPortSuffix(s[i:]) {
			return netip.Addr{}, "", false, false
		}
		host = s[:i]
	} else {
		host = s
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, "", false, false
	}
	return normalise(a, host)
}

// trimBlanks removes leading and trailing spaces and tabs. strings.Trim with
// the cutset " \t" did the same, but built its set of bytes on every call:
// a third of the cost of parsing a RemoteAddr that has no blank to remove.
func trimBlanks(s string) string {
	s = s[skipOWS(s, 0):]
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// normalise strips the zone of a, unmaps an IPv4-mapped IPv6 address, and
// reports whether host is the canonical text of the result. IPv4 text that
// netip accepts is always canonical (it rejects leading zeros and short
// forms); IPv6 text usually is not, and is formatted again when needed.
func normalise(a netip.Addr, host string) (netip.Addr, string, bool, bool) {
	plain := a.Is4()
	if a.Zone() != "" {
		a = a.WithZone("")
	}
	a = a.Unmap()
	return a, host, plain, a.IsValid()
}

// validPortSuffix reports whether s is empty or ":" followed by a decimal
// port number between 0 and 65535.
func validPortSuffix(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != ':' || len(s) < 2 || len(s) > 6 {
		return false
	}
	n := 0
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}
