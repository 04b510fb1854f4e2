package keyfuncs

import (
	"net/netip"
	"strings"
)

// parseAddr parses the address forms of RemoteAddr and forwarding headers
// ("ip", "ip:port" for IPv4, "[ipv6]", "[ipv6]:port", with an optional zone
// and blanks around), without zone and with IPv4-mapped addresses unmapped.
// plain reports that host is already the result's canonical text.
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

// trimBlanks removes leading and trailing spaces and tabs.
func trimBlanks(s string) string {
	s = s[skipOWS(s, 0):]
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// normalise strips a's zone, unmaps it, and reports whether host is the
// canonical text of the result.
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
