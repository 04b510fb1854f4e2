package keyfuncs

import (
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
)

// wantText is what prefixText must return for p: netip's own text.
func wantText(p netip.Prefix) string {
	if p.Bits() == p.Addr().BitLen() {
		return p.Addr().String()
	}
	return p.String()
}

// randomPrefixes returns n prefixes of random addresses (IPv4, IPv6 and
// IPv4-mapped IPv6) at random lengths, each as Addr.Prefix makes it.
func randomPrefixes(rng *rand.Rand, n int) []netip.Prefix {
	ps := make([]netip.Prefix, n)
	for i := range ps {
		var b [16]byte
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		a := netip.AddrFrom16(b)
		switch rng.IntN(3) {
		case 0:
			a = netip.AddrFrom4([4]byte(b[:4]))
		case 1:
			a = netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]})
		}
		bits := a.BitLen()
		if rng.IntN(2) == 0 {
			bits = rng.IntN(a.BitLen() + 1)
		}
		p, err := a.Prefix(bits)
		if err != nil {
			panic(err)
		}
		ps[i] = p
	}
	return ps
}

// TestPrefixText: every text, formatted or remembered, is netip's, and an
// address never gets another's text, IPv4 and its IPv4-mapped form
// included: 200,000 prefixes over a table of 16,384 entries, so that most
// entries are replaced many times.
func TestPrefixText(t *testing.T) {
	t.Parallel()
	fixed := []string{"192.0.2.7/32", "192.0.2.0/24", "0.0.0.0/0", "::ffff:192.0.2.7/128", "::ffff:192.0.2.0/120",
		"2001:db8:1:2::/64", "2001:db8:1:2:3:4:5:6/128", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "::/0", "::/128"}
	var ps []netip.Prefix
	for _, s := range fixed {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	ps = append(ps, randomPrefixes(rand.New(rand.NewPCG(1, 2)), 200_000)...)
	for round := range 2 {
		for _, p := range ps {
			if got, want := prefixText(p), wantText(p); got != want {
				t.Fatalf("round %d: prefixText(%v) = %q, want %q", round, p, got, want)
			}
		}
	}
}

// TestPrefixTextConcurrent: goroutines formatting overlapping sets of
// prefixes, each replacing entries the others read, always get netip's
// text (and the race detector sees every entry published once, whole).
func TestPrefixTextConcurrent(t *testing.T) {
	t.Parallel()
	ps := randomPrefixes(rand.New(rand.NewPCG(3, 4)), 40_000)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 5))
			for range 50_000 {
				p := ps[rng.IntN(len(ps))]
				if got, want := prefixText(p), wantText(p); got != want {
					t.Errorf("prefixText(%v) = %q, want %q", p, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
