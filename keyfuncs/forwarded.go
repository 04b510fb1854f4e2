package keyfuncs

import (
	"net/netip"
	"strings"
)

// walkList reads a comma-separated address list spread over several header
// lines from right to left, as IPResolver documents: trusted addresses are
// hops to skip, the first untrusted one is the client, a malformed entry ends
// the walk at the last address reached. Empty list elements are ignored
// (RFC 9110 allows them). It starts from the peer's address (addr, host,
// plain, as resolve returns them) and does not allocate.
func (res *IPResolver) walkList(values []string, addr netip.Addr, host string, plain bool) (netip.Addr, string, bool) {
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for v != "" {
			entry := v
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				entry, v = v[j+1:], v[:j]
			} else {
				v = ""
			}
			if trimBlanks(entry) == "" {
				continue
			}
			a, h, p, ok := parseAddr(entry)
			if !ok {
				return addr, host, plain
			}
			addr, host, plain = a, h, p
			if !res.isTrusted(a) {
				return addr, host, plain
			}
		}
	}
	return addr, host, plain
}

// badFor stands for a Forwarded element whose for= is missing or cannot be
// an address; parseAddr rejects it, so it ends a walk.
const badFor = "!"

// parseForwardedFor extracts the for= parameter of every element of an RFC
// 7239 Forwarded header, left to right across all lines. An element without
// a usable for= yields badFor. ok is false when the syntax is broken (an
// unterminated quoted string, a parameter without "=", a repeated for=), in
// which case element boundaries are unknown and the header must be ignored.
func parseForwardedFor(values []string) (fors []string, ok bool) {
	for _, v := range values {
		i := 0
		elemFor, hasFor, hasPair := "", false, false
		end := func() {
			if hasPair {
				if elemFor == "" || strings.IndexByte(elemFor, ',') >= 0 {
					elemFor = badFor
				}
				fors = append(fors, elemFor)
			}
			elemFor, hasFor, hasPair = "", false, false
		}
		for {
			i = skipOWS(v, i)
			if i == len(v) {
				end()
				break
			}
			switch v[i] {
			case ',':
				end()
				i++
				continue
			case ';':
				i++
				continue
			}
			start := i
			for i < len(v) && isTokenChar(v[i]) {
				i++
			}
			name := v[start:i]
			if name == "" || i == len(v) || v[i] != '=' {
				return nil, false
			}
			i++
			var value string
			var good bool
			if i < len(v) && v[i] == '"' {
				value, i, good = quotedString(v, i)
			} else {
				start = i
				for i < len(v) && isTokenChar(v[i]) {
					i++
				}
				value, good = v[start:i], i > start
			}
			if !good {
				return nil, false
			}
			if strings.EqualFold(name, "for") {
				if hasFor {
					return nil, false
				}
				elemFor, hasFor = value, true
			}
			hasPair = true
			i = skipOWS(v, i)
			if i < len(v) && v[i] != ';' && v[i] != ',' {
				return nil, false
			}
		}
	}
	return fors, true
}

// quotedString parses the quoted-string starting at s[i] == '"' and returns
// its unescaped content and the index after the closing quote.
func quotedString(s string, i int) (string, int, bool) {
	var b strings.Builder
	escaped := false
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && j+1 < len(s):
			if !escaped {
				escaped = true
				b.WriteString(s[i+1 : j])
			}
			j++
			b.WriteByte(s[j])
		case c == '"':
			if !escaped {
				return s[i+1 : j], j + 1, true
			}
			return b.String(), j + 1, true
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", 0, false
		default:
			if escaped {
				b.WriteByte(c)
			}
		}
	}
	return "", 0, false
}

// skipOWS returns the index of the first byte at or after i that is not a
// space or a tab.
func skipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// isTokenChar reports whether c may appear in an RFC 9110 token.
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
